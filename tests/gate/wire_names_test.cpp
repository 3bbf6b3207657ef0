// Every value of the enums that reach the wire (JSON, audit, ledger) has one
// name of its own; a value left out of its table would read as "unknown".
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "base/error.hpp"
#include "gate/ask.hpp"
#include "gate/decision.hpp"
#include "gate/op.hpp"

namespace leasefs::gate {
namespace {

template <typename Enum, typename Name>
void expect_distinct_names(int last, Name name) {
  std::set<std::string> seen;
  for (int i = 0; i <= last; ++i) {
    const std::string text(name(static_cast<Enum>(i)));
    EXPECT_NE(text, "unknown") << "value " << i;
    EXPECT_TRUE(seen.insert(text).second) << "name " << text << " is given twice";
  }
}

TEST(WireNames, EveryOpHasItsOwnName) {
  expect_distinct_names<Op>(static_cast<int>(Op::kExec), op_name);
  EXPECT_EQ(op_name(Op::kOpenWrite), "open");
}

TEST(WireNames, EveryDenyReasonHasItsOwnName) {
  expect_distinct_names<DenyReason>(static_cast<int>(DenyReason::kTemporaryLeftover),
                                    [](DenyReason r) { return to_string(r); });
  EXPECT_EQ(to_string(DenyReason::kNone), "allowed");
}

TEST(WireNames, EveryAskEndHasItsOwnName) {
  expect_distinct_names<AskEnd>(static_cast<int>(AskEnd::kStopped),
                                [](AskEnd e) { return to_string(e); });
}

TEST(WireNames, EveryErrorCodeReadsBackAsItself) {
  for (int i = 0; i <= static_cast<int>(Errc::kUndoConflict); ++i) {
    const auto code = static_cast<Errc>(i);
    EXPECT_EQ(errc_from_wire(wire_name(code)), code) << wire_name(code);
  }
  EXPECT_FALSE(errc_from_wire("no_such_code").has_value());
}

}  // namespace
}  // namespace leasefs::gate

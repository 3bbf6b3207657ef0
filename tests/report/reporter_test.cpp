#include "report/reporter.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gate/gate.hpp"

namespace leasefs::report {
namespace {

struct RecordingSink : Sink {
  std::vector<Refusal> refusals;
  void on_refusal(Refusal r) noexcept override { refusals.push_back(std::move(r)); }
  void on_write_closed(WriteClosed) noexcept override {}
};

// Every refusal reaches the sink (which counts them for the audit); the process
// name is read once and kept for the repeats.
TEST(Reporter, EveryRefusalReachesTheSinkWithItsProcess) {
  gate::Gate gate;
  Reporter reporter(gate);
  RecordingSink sink;
  reporter.set_sink(&sink);
  gate::Caller c{.pid = ::getpid(), .uid = 0, .gid = 0};
  for (int i = 0; i < 5; ++i)
    reporter.refusal(gate::Op::kWrite, "a.txt", c, gate::DenyReason::kNoLease);
  reporter.refusal(gate::Op::kUnlink, "a.txt", c, gate::DenyReason::kNoLease);
  ASSERT_EQ(sink.refusals.size(), 6u);
  for (const auto& r : sink.refusals) {
    EXPECT_EQ(r.path, "a.txt");
    EXPECT_EQ(r.count, 1u);
    EXPECT_EQ(r.process, sink.refusals[0].process);
  }
  EXPECT_FALSE(sink.refusals[0].process.empty());
  EXPECT_EQ(sink.refusals[0].op, gate::Op::kWrite);
  EXPECT_EQ(sink.refusals[5].op, gate::Op::kUnlink);
  reporter.set_sink(nullptr);
}

}  // namespace
}  // namespace leasefs::report

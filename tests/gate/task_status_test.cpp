#include "gate/task_status.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "base/error.hpp"

namespace leasefs::gate {
namespace {

using S = TaskStatus;

// The whitelist, written out from DESIGN.md independently of the code under test.
const std::set<std::pair<S, S>> kAllowed = {
    {S::kPending, S::kInProgress},
    {S::kInProgress, S::kPaused},
    {S::kInProgress, S::kBlocked},
    {S::kInProgress, S::kWaitingVerification},
    {S::kInProgress, S::kCompleted},
    {S::kInProgress, S::kFailed},
    {S::kPaused, S::kInProgress},
    {S::kPaused, S::kFailed},
    {S::kBlocked, S::kInProgress},
    {S::kBlocked, S::kFailed},
    {S::kWaitingVerification, S::kInProgress},
    {S::kWaitingVerification, S::kCompleted},
    {S::kWaitingVerification, S::kFailed},
};

TEST(TaskStatus, AllFortyNinePairsFollowTheWhitelist) {
  int checked = 0;
  for (S from : kAllStatuses) {
    for (S to : kAllStatuses) {
      const bool allowed = kAllowed.count({from, to}) == 1;
      SCOPED_TRACE(std::string(to_string(from)) + " -> " + std::string(to_string(to)));
      EXPECT_EQ(can_transition(from, to), allowed);
      if (allowed) {
        EXPECT_NO_THROW(check_transition(from, to));
      } else {
        try {
          check_transition(from, to);
          ADD_FAILURE() << "expected invalid_transition";
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), "invalid_transition");
          EXPECT_NE(std::string(e.what()).find(std::string(to_string(from))), std::string::npos);
          EXPECT_NE(std::string(e.what()).find(std::string(to_string(to))), std::string::npos);
        }
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 49);
}

TEST(TaskStatus, TerminalStatesHaveNoExits) {
  for (S to : kAllStatuses) {
    EXPECT_FALSE(can_transition(S::kCompleted, to));
    EXPECT_FALSE(can_transition(S::kFailed, to));
  }
  EXPECT_TRUE(is_terminal(S::kCompleted));
  EXPECT_TRUE(is_terminal(S::kFailed));
  EXPECT_FALSE(is_terminal(S::kPaused));
}

TEST(TaskStatus, NamesRoundTrip) {
  for (S s : kAllStatuses) EXPECT_EQ(parse_status(to_string(s)), s);
  EXPECT_FALSE(parse_status("done").has_value());
  EXPECT_FALSE(parse_status("").has_value());
}

}  // namespace
}  // namespace leasefs::gate

#include "gate/decision.hpp"

#include <gtest/gtest.h>

namespace leasefs::gate {
namespace {

constexpr int64_t kNow = 1'000'000;

GateSnapshot leased(uint64_t turn, Grant grant) {
  GateSnapshot s;
  s.has_task = true;
  s.status = TaskStatus::kInProgress;
  s.turn = turn;
  s.grants.push_back(std::move(grant));
  return s;
}

Grant grant_for(uint64_t turn) {
  Grant g;
  g.id = "G_0001";
  g.turn = turn;
  g.reason = "fix the timeout";
  return g;
}

TEST(Decision, NoTaskRefused) {
  GateSnapshot s;
  auto d = decide(s, Op::kWrite, "a.txt", {}, kNow);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.reason, DenyReason::kNoTask);
}

TEST(Decision, NotInProgressRefusedEvenWithAGrant) {
  auto s = leased(3, grant_for(3));
  for (TaskStatus st : {TaskStatus::kPaused, TaskStatus::kBlocked, TaskStatus::kCompleted,
                        TaskStatus::kWaitingVerification, TaskStatus::kPending}) {
    s.status = st;
    auto d = decide(s, Op::kWrite, "a.txt", {}, kNow);
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.reason, DenyReason::kNotInProgress);
  }
}

TEST(Decision, NoLeaseRefused) {
  auto s = leased(3, grant_for(3));
  s.grants.clear();
  EXPECT_EQ(decide(s, Op::kCreate, "a.txt", {}, kNow).reason, DenyReason::kNoLease);
}

TEST(Decision, I3_GrantForTheCurrentTurnAllows) {
  auto s = leased(3, grant_for(3));
  auto d = decide(s, Op::kWrite, "a.txt", {}, kNow);
  EXPECT_TRUE(d.allowed);
  ASSERT_NE(d.grant, nullptr);
  EXPECT_EQ(d.grant->id, "G_0001");
}

TEST(Decision, I3_StaleLeaseRefused) {
  // A grant from turn 2 in a turn-3 snapshot: refused, whatever else says writable.
  auto s = leased(3, grant_for(2));
  auto d = decide(s, Op::kWrite, "a.txt", {}, kNow);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.reason, DenyReason::kStaleLease);
}

TEST(Decision, ExpiredGrantRefused) {
  auto g = grant_for(3);
  g.expires_ms = kNow;
  auto s = leased(3, g);
  EXPECT_EQ(decide(s, Op::kWrite, "a.txt", {}, kNow).reason, DenyReason::kExpired);
  EXPECT_TRUE(decide(s, Op::kWrite, "a.txt", {}, kNow - 1).allowed);
}

TEST(Decision, PathScopeIsEnforced) {
  auto g = grant_for(3);
  g.paths = {"src/**"};
  auto s = leased(3, g);
  EXPECT_TRUE(decide(s, Op::kWrite, "src/net/timeout.c", {}, kNow).allowed);
  auto d = decide(s, Op::kWrite, "README.md", {}, kNow);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.reason, DenyReason::kOutOfScope);
}

TEST(Decision, APathNarrowedGrantNeverCoversAnUnresolvedPath) {
  auto g = grant_for(3);
  g.paths = {"*"};
  auto s = leased(3, g);
  EXPECT_TRUE(decide(s, Op::kWrite, "top.txt", {}, kNow).allowed);
  EXPECT_EQ(decide(s, Op::kWrite, "", {}, kNow).reason, DenyReason::kOutOfScope);
  EXPECT_EQ(decide(s, Op::kWrite, "src/deep/x.c", {}, kNow).reason, DenyReason::kOutOfScope);
}

TEST(Decision, OpClassScopeIsEnforced) {
  auto g = grant_for(3);
  g.ops = kClassWrite;
  auto s = leased(3, g);
  EXPECT_TRUE(decide(s, Op::kWrite, "a", {}, kNow).allowed);
  EXPECT_TRUE(decide(s, Op::kOpenWrite, "a", {}, kNow).allowed);
  EXPECT_TRUE(decide(s, Op::kTruncate, "a", {}, kNow).allowed);
  EXPECT_EQ(decide(s, Op::kUnlink, "a", {}, kNow).reason, DenyReason::kOutOfScope);
  EXPECT_EQ(decide(s, Op::kRename, "a", {}, kNow).reason, DenyReason::kOutOfScope);
  EXPECT_EQ(decide(s, Op::kMkdir, "a", {}, kNow).reason, DenyReason::kOutOfScope);
  EXPECT_EQ(decide(s, Op::kSetxattr, "a", {}, kNow).reason, DenyReason::kOutOfScope);
}

TEST(Decision, I5_LongrunIsProtectedEvenUnderALease) {
  auto s = leased(3, grant_for(3));
  for (const char* p : {".longrun", ".longrun/state.json", ".longrun/x/y"}) {
    auto d = decide(s, Op::kWrite, p, {}, kNow);
    EXPECT_FALSE(d.allowed) << p;
    EXPECT_EQ(d.reason, DenyReason::kProtectedPath) << p;
  }
  EXPECT_TRUE(decide(s, Op::kWrite, ".longrunner", {}, kNow).allowed);
  EXPECT_TRUE(decide(s, Op::kWrite, "src/.longrun", {}, kNow).allowed);
}

TEST(Decision, AnyCoveringGrantAllows) {
  auto narrow = grant_for(3);
  narrow.paths = {"docs/**"};
  auto wide = grant_for(3);
  wide.id = "G_0002";
  wide.paths = {"src/**"};
  auto s = leased(3, narrow);
  s.grants.push_back(wide);
  auto d = decide(s, Op::kCreate, "src/a.c", {}, kNow);
  ASSERT_TRUE(d.allowed);
  EXPECT_EQ(d.grant->id, "G_0002");
}

TEST(OpClasses, ParseAndName) {
  std::string unknown;
  EXPECT_EQ(parse_op_classes({"write", "rename"}), kClassWrite | kClassRename);
  EXPECT_EQ(parse_op_classes({}), kAllOps);
  EXPECT_FALSE(parse_op_classes({"write", "delete"}, &unknown).has_value());
  EXPECT_EQ(unknown, "delete");
  EXPECT_EQ(op_class_names(kClassCreate | kClassUnlink),
            (std::vector<std::string>{"create", "unlink"}));
}

}  // namespace
}  // namespace leasefs::gate

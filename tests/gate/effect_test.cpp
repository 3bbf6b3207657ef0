#include "gate/effect.hpp"

#include <gtest/gtest.h>

#include "gate/temp_sibling.hpp"

namespace leasefs::gate {
namespace {

GateSnapshot with_grants(std::vector<std::pair<std::vector<std::string>, OpMask>> grants) {
  GateSnapshot s;
  s.has_task = true;
  s.status = TaskStatus::kInProgress;
  s.turn = 1;
  for (auto& [paths, ops] : grants) {
    Grant g;
    g.id = "G";
    g.turn = 1;
    g.paths = paths;
    g.ops = ops;
    s.grants.push_back(g);
  }
  return s;
}

TEST(Expressible, UnresolvedAndOverlongPathsMatchOnlyUnscopedGrants) {
  EXPECT_FALSE(is_expressible(kUnresolvedPath));
  EXPECT_FALSE(is_expressible(std::string(kMaxPathLength, 'a')));
  EXPECT_TRUE(is_expressible("src/a.c"));
  const GateSnapshot scoped = with_grants({{{"**"}, kAllOps}});
  EXPECT_FALSE(decide(scoped, Op::kCreate, kUnresolvedPath, {}, 0).allowed);
  EXPECT_FALSE(decide(scoped, Op::kCreate, std::string(kMaxPathLength, 'a'), {}, 0).allowed);
  const GateSnapshot unscoped = with_grants({{{}, kAllOps}});
  EXPECT_TRUE(decide(unscoped, Op::kCreate, kUnresolvedPath, {}, 0).allowed);
}

TEST(DecideRename, SubtreeAtBothEnds) {
  const GateSnapshot s = with_grants({{{"src/*"}, kAllOps}});
  RenamePlan plan{"src/sub", "src/moved", true, {{"c.c"}, true}};
  EffectDecision d = decide_rename(s, plan, {}, 0);
  EXPECT_FALSE(d.decision.allowed);
  EXPECT_EQ(d.refused.path, "src/sub/c.c");
  plan.from_tree.entries.clear();
  EXPECT_TRUE(decide_rename(s, plan, {}, 0).decision.allowed);
  plan.from_tree.complete = false;  // too large to list
  EXPECT_FALSE(decide_rename(s, plan, {}, 0).decision.allowed);
  EXPECT_TRUE(decide_rename(with_grants({{{}, kAllOps}}), plan, {}, 0).decision.allowed);
}

TEST(DecideRename, ReplacingNeedsTheDeletingClass) {
  const GateSnapshot s = with_grants({{{"src/**"}, kClassRename}});
  RenamePlan plan{"src/a", "src/b"};
  EXPECT_TRUE(decide_rename(s, plan, {}, 0).decision.allowed);
  plan.target = RenameTarget::kFile;
  EffectDecision d = decide_rename(s, plan, {}, 0);
  EXPECT_FALSE(d.decision.allowed);
  EXPECT_EQ(d.refused.op, Op::kUnlink);
  plan.exchange = true;  // nothing is deleted by an exchange
  EXPECT_TRUE(decide_rename(s, plan, {}, 0).decision.allowed);
}

TEST(DecideLink, NewNameMayNotOpenMoreThanTheSource) {
  const GateSnapshot s =
      with_grants({{{"src/**"}, kClassWrite | kClassCreate}, {{"docs/**"}, kClassCreate}});
  EXPECT_FALSE(decide_link(s, "docs/x", "src/x", {}, 0).decision.allowed);
  EXPECT_TRUE(decide_link(s, "src/a", "src/b", {}, 0).decision.allowed);
  EXPECT_TRUE(decide_link(s, "src/a", "docs/b", {}, 0).decision.allowed);
}

TEST(TempSibling, OnlyBesideAPathTheGrantEdits) {
  const GateSnapshot s = with_grants({{{"src/a.c"}, kAllOps}});
  EXPECT_TRUE(decide_temp_sibling(s, "src/sedX1", {}, 0).allowed);
  EXPECT_FALSE(decide_temp_sibling(s, "docs/sedX1", {}, 0).allowed);
  EXPECT_FALSE(decide_temp_sibling(s, "src/sub/x", {}, 0).allowed);
  EXPECT_FALSE(decide_temp_sibling(s, ".longrun/x", {}, 0).allowed);
  EXPECT_TRUE(decide_temp_sibling(s, ".git/index.lock", {}, 0).allowed);
  EXPECT_FALSE(
      decide_temp_sibling(with_grants({{{"src/a.c"}, kClassAttr}}), "src/t", {}, 0).allowed);
  EXPECT_FALSE(decide_temp_sibling(with_grants({{{}, kAllOps}}), "src/t", {}, 0).allowed);
}

TEST(TempSibling, RenamedOnlyOntoAWritablePathWhileItsTurnLasts) {
  const GateSnapshot s = with_grants({{{"src/a.c"}, kAllOps}});
  EXPECT_TRUE(decide_temp_sibling_rename(s, "src/t", "src/a.c", true, 1, {}, 0).allowed);
  EXPECT_FALSE(decide_temp_sibling_rename(s, "src/t", "src/b.c", true, 1, {}, 0).allowed);
  EXPECT_FALSE(decide_temp_sibling_rename(s, "src/t", "src/a.c", true, 0, {}, 0).allowed);
  EXPECT_TRUE(
      decide_temp_sibling_rename(s, ".git/index.lock", ".git/index", true, 1, {}, 0).allowed);
  EXPECT_FALSE(
      decide_temp_sibling_rename(s, ".git/index.lock", ".git/HEAD", true, 1, {}, 0).allowed);
  // Onto a new name it is a create: a write-only grant gives none.
  const GateSnapshot w = with_grants({{{"src/**"}, kClassWrite}});
  EXPECT_TRUE(decide_temp_sibling_rename(w, "src/t", "src/a.c", true, 1, {}, 0).allowed);
  EXPECT_FALSE(decide_temp_sibling_rename(w, "src/t", "src/new.c", false, 1, {}, 0).allowed);
  EXPECT_TRUE(decide_temp_sibling_rename(s, "src/t", "src/a.c", false, 1, {}, 0).allowed);
  EXPECT_TRUE(decide_on_temp_sibling(s, Op::kWrite, 1, {}, 0).allowed);
  EXPECT_TRUE(decide_on_temp_sibling(s, Op::kUnlink, 1, {}, 0).allowed);
  EXPECT_FALSE(decide_on_temp_sibling(s, Op::kLink, 1, {}, 0).allowed);
  EXPECT_FALSE(decide_on_temp_sibling(s, Op::kRename, 1, {}, 0).allowed);
}

}  // namespace
}  // namespace leasefs::gate

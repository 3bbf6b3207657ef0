// RefusalFeed: what a tool call's hooks hand back. The agent's uid may call
// mark and take itself, so whatever it does makes the answer longer, never
// shorter.
#include "service/refusal_feed.hpp"

#include <gtest/gtest.h>

namespace leasefs::service {
namespace {

using nlohmann::json;

json refusal(const std::string& path, uint64_t turn) {
  return {{"type", "refusal"}, {"op", "write"}, {"path", path}, {"turn", turn}, {"count", 1}};
}

std::vector<std::string> paths(const RefusalFeed::Window& w) {
  std::vector<std::string> out;
  for (const json& r : w.refusals) out.push_back(r.value("path", ""));
  return out;
}

TEST(RefusalFeed, AMarkedCallGetsWhatCameAfterItsMarkOnce) {
  RefusalFeed feed;
  feed.note({refusal("before", 1)});
  feed.mark("toolu_1");
  feed.note({refusal("during", 1)});
  RefusalFeed::Window w = feed.take("toolu_1", 1);
  EXPECT_FALSE(w.whole_turn);
  EXPECT_EQ(paths(w), std::vector<std::string>{"during"});
  EXPECT_EQ(w.left_out, 0u);
  EXPECT_EQ(w.refusals[0].value("seq", 0), 2);
  EXPECT_FALSE(w.refusals[0].contains("type"));
}

TEST(RefusalFeed, NothingNewIsAnEmptyWindow) {
  RefusalFeed feed;
  feed.note({refusal("before", 1)});
  feed.mark("toolu_1");
  RefusalFeed::Window w = feed.take("toolu_1", 1);
  EXPECT_FALSE(w.whole_turn);
  EXPECT_TRUE(w.refusals.empty());
  EXPECT_EQ(w.left_out, 0u);
}

TEST(RefusalFeed, TakenAgainOrNeverMarkedAnswersTheWholeTurn) {
  RefusalFeed feed;
  feed.note({refusal("old turn", 1), refusal("this turn", 2)});
  feed.mark("toolu_1");
  feed.take("toolu_1", 2);  // the agent takes it first
  feed.mark("toolu_1");     // and marks it again, after the refusal
  RefusalFeed::Window again = feed.take("toolu_1", 2);
  EXPECT_TRUE(again.whole_turn);
  EXPECT_EQ(paths(again), std::vector<std::string>{"this turn"});
  RefusalFeed::Window unknown = feed.take("never marked", 2);
  EXPECT_TRUE(unknown.whole_turn);
  EXPECT_EQ(paths(unknown), std::vector<std::string>{"this turn"});
}

TEST(RefusalFeed, AMarkMadeLaterCannotNarrowIt) {
  RefusalFeed feed;
  feed.mark("toolu_1");
  feed.note({refusal("during", 1)});
  feed.mark("toolu_1");  // a second mark, after the refusal, changes nothing
  EXPECT_EQ(paths(feed.take("toolu_1", 1)), std::vector<std::string>{"during"});
  // Taken before its mark: a mark after it cannot make a window.
  feed.take("toolu_2", 1);
  feed.mark("toolu_2");
  EXPECT_TRUE(feed.take("toolu_2", 1).whole_turn);
}

TEST(RefusalFeed, AFloodIsCountedNotHidden) {
  RefusalFeed feed;
  feed.mark("toolu_1");
  std::vector<json> flood;
  for (size_t i = 0; i < RefusalFeed::kKept + 100; ++i)
    flood.push_back(refusal(std::to_string(i), 1));
  feed.note(flood);
  RefusalFeed::Window w = feed.take("toolu_1", 1);
  EXPECT_EQ(w.refusals.size(), RefusalFeed::kShown);
  EXPECT_EQ(w.left_out, RefusalFeed::kKept + 100 - RefusalFeed::kShown);
  EXPECT_EQ(w.refusals.back().value("path", ""), std::to_string(RefusalFeed::kKept + 99));
  RefusalFeed::Window turn = feed.take("", 1);
  EXPECT_EQ(turn.left_out, RefusalFeed::kKept + 100 - RefusalFeed::kShown);
}

TEST(RefusalFeed, MarksPushedOutAnswerTheWholeTurn) {
  RefusalFeed feed;
  feed.mark("toolu_first");
  for (size_t i = 0; i < RefusalFeed::kMaxMarks; ++i) feed.mark("spam" + std::to_string(i));
  feed.note({refusal("during", 3)});
  RefusalFeed::Window w = feed.take("toolu_first", 3);
  EXPECT_TRUE(w.whole_turn);
  EXPECT_EQ(paths(w), std::vector<std::string>{"during"});
}

TEST(RefusalFeed, ANewTaskStartsEmpty) {
  RefusalFeed feed;
  feed.note({refusal("last task", 1)});
  feed.forget();
  EXPECT_TRUE(feed.take("", 1).refusals.empty());
}

}  // namespace
}  // namespace leasefs::service

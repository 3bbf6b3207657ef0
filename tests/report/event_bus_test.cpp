#include "report/event_bus.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "base/json_text.hpp"

namespace leasefs::report {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

TEST(EventBus, EverySubscriberGetsTheSameTextWithSeqAndTime) {
  EventBus bus;
  auto watcher = bus.subscribe();
  auto audit = bus.subscribe_lossless(8);
  bus.publish({{"type", "grant"}, {"reason", "fix the timeout"}});
  auto a = watcher->pop(milliseconds(0));
  auto b = audit->pop(milliseconds(0));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->str(), b->str());
  const json value = a->value();
  EXPECT_EQ(value["type"], "grant");
  EXPECT_EQ(value["reason"], "fix the timeout");
  EXPECT_EQ(value["seq"], 1);
  EXPECT_TRUE(value["ts_ms"].is_number_integer());
  EXPECT_EQ(a->str(), base::json_text(value));  // compact, as every other line
}

// An event written member by member gets its "seq" and "ts_ms" in their places,
// from the same counter as any other, and its text is the canonical one.
TEST(EventBus, AnEventWrittenMemberByMemberIsNumberedAndCanonical) {
  EventBus bus;
  auto audit = bus.subscribe_lossless(8);
  bus.publish({{"type", "turn"}});
  base::ObjectText ev;
  ev.set("type", "journal").set("path", "src/a.c").set("turn", 3).set("undoable", true);
  bus.publish(std::move(ev));
  ASSERT_TRUE(audit->pop(milliseconds(0)));
  auto e = audit->pop(milliseconds(0));
  ASSERT_TRUE(e);
  const json value = e->value();
  EXPECT_EQ(value["seq"], 2);
  EXPECT_TRUE(value["ts_ms"].is_number_integer());
  EXPECT_EQ(value["path"], "src/a.c");
  EXPECT_EQ(e->str(), base::json_text(value));
}

// An agent picks the path, so its bytes may be anything: the text stays one
// JSON document, with invalid UTF-8 replaced, for every reader.
TEST(EventBus, AnEventWithInvalidUtf8IsStillOneDocument) {
  EventBus bus;
  auto audit = bus.subscribe_lossless(8);
  bus.publish({{"type", "mutation"}, {"path", std::string("src/bad\xff\xfe\n.c")}});
  auto e = audit->pop(milliseconds(0));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->str().find('\n'), std::string::npos);
  EXPECT_EQ(e->value()["path"], "src/bad\xef\xbf\xbd\xef\xbf\xbd\n.c");
}

TEST(EventBus, ALossyQueueThatOverflowedSaysHowManyItDropped) {
  EventBus bus;
  auto watcher = bus.subscribe(2);
  for (int i = 1; i <= 5; ++i) bus.publish({{"type", "turn"}, {"i", i}});
  auto first = watcher->pop(milliseconds(0));
  ASSERT_TRUE(first);
  const json v1 = first->value();
  EXPECT_EQ(v1["i"], 4);
  EXPECT_EQ(v1["dropped_before"], 3);
  EXPECT_EQ(first->str(), base::json_text(v1));
  auto second = watcher->pop(milliseconds(0));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->value()["i"], 5);
  EXPECT_FALSE(second->value().contains("dropped_before"));
  EXPECT_FALSE(watcher->pop(milliseconds(0)));
}

TEST(EventBus, ALosslessQueueMakesThePublisherWaitAndKeepsEveryEvent) {
  EventBus bus;
  auto audit = bus.subscribe_lossless(1);
  std::thread publisher([&] {
    for (int i = 1; i <= 50; ++i) bus.publish({{"type", "mutation"}, {"i", i}});
  });
  std::vector<int> seen;
  while (seen.size() < 50) {
    auto e = audit->pop(milliseconds(5000));
    ASSERT_TRUE(e);
    const json v = e->value();
    EXPECT_FALSE(v.contains("dropped_before"));
    seen.push_back(v["i"].get<int>());
  }
  publisher.join();
  for (int i = 0; i < 50; ++i) EXPECT_EQ(seen[i], i + 1);
}

}  // namespace
}  // namespace leasefs::report

#include "memory/idempotency_store.hpp"

#include <gtest/gtest.h>

#include "temp_dir.hpp"

namespace leasefs::memory {
namespace {

using nlohmann::json;

TEST(IdempotencyStore, UnknownKeyIsEmpty) {
  IdempotencyStore store(":memory:");
  EXPECT_FALSE(store.lookup("k1"));
  EXPECT_FALSE(store.lookup_for("k1", "grant"));
}

TEST(IdempotencyStore, RemembersTheReply) {
  IdempotencyStore store(":memory:");
  const json reply = {{"grant_id", "G_0001"}, {"turn", 3}, {"reason", "한국어도 돼요"}};
  store.remember("k1", "grant", reply);
  EXPECT_EQ(store.lookup("k1"), reply);
}

TEST(IdempotencyStore, FirstReplyStays) {
  IdempotencyStore store(":memory:");
  store.remember("k1", "grant", json{{"n", 1}});
  store.remember("k1", "grant", json{{"n", 2}});
  EXPECT_EQ(store.lookup("k1"), (json{{"n", 1}}));
}

TEST(IdempotencyStore, ReusedKeyForAnotherCommandIsDetectable) {
  IdempotencyStore store(":memory:");
  store.remember("k1", "grant", json{{"n", 1}});
  const auto same = store.lookup_for("k1", "grant");
  ASSERT_TRUE(same);
  EXPECT_TRUE(same->command_matches);
  const auto other = store.lookup_for("k1", "checkpoint");
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->command_matches);
  EXPECT_EQ(other->command, "grant");
  EXPECT_EQ(other->reply, (json{{"n", 1}}));
}

TEST(IdempotencyStore, PersistsAcrossReopen) {
  testing::TempDir dir;
  const std::string path = dir.file("memory.db");
  {
    IdempotencyStore store(path);
    store.remember("ckpt-42", "checkpoint", json{{"checkpoint_id", "C_0042"}});
  }
  IdempotencyStore store(path);
  const auto stored = store.lookup_for("ckpt-42", "checkpoint");
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->reply["checkpoint_id"], "C_0042");
}

}  // namespace
}  // namespace leasefs::memory

#include "memory/idempotency_store.hpp"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.hpp"

namespace leasefs::memory {
namespace {

using nlohmann::json;

TEST(IdempotencyStore, UnknownKeyIsEmpty) {
  IdempotencyStore store(":memory:");
  EXPECT_FALSE(store.lookup("k1"));
}

TEST(IdempotencyStore, RemembersTheReply) {
  IdempotencyStore store(":memory:");
  const json reply = {{"grant_id", "G_0001"}, {"turn", 3}, {"reason", "한국어도 돼요"}};
  store.remember("k1", "grant", reply);
  EXPECT_EQ(store.lookup("k1")->reply, reply);
}

TEST(IdempotencyStore, FirstReplyStays) {
  IdempotencyStore store(":memory:");
  store.remember("k1", "grant", json{{"n", 1}});
  store.remember("k1", "grant", json{{"n", 2}});
  EXPECT_EQ(store.lookup("k1")->reply, (json{{"n", 1}}));
}

TEST(IdempotencyStore, TheCommandIsKeptWithTheReply) {
  IdempotencyStore store(":memory:");
  store.remember("k1", "grant", json{{"n", 1}});
  const auto stored = store.lookup("k1");
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->command, "grant");
  EXPECT_EQ(stored->reply, (json{{"n", 1}}));
}

TEST(IdempotencyStore, PersistsAcrossReopen) {
  test::TempDir dir;
  const std::string path = dir.file("memory.db");
  {
    IdempotencyStore store(path);
    store.remember("ckpt-42", "checkpoint", json{{"checkpoint_id", "C_0042"}});
  }
  IdempotencyStore store(path);
  const auto stored = store.lookup("ckpt-42");
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->reply["checkpoint_id"], "C_0042");
}

}  // namespace
}  // namespace leasefs::memory

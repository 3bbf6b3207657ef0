#include "memory/sqlite_memory_store.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "memory/memory_error.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::memory {
namespace {

NewRecord note(std::string title, std::string content, std::vector<std::string> keywords = {}) {
  NewRecord record;
  record.type = "note";
  record.title = std::move(title);
  record.content = std::move(content);
  record.keywords = std::move(keywords);
  return record;
}

std::vector<std::string> ids(const std::vector<SearchHit>& hits) {
  std::vector<std::string> out;
  for (const auto& hit : hits) out.push_back(hit.record.id);
  return out;
}

bool contains(const std::vector<SearchHit>& hits, const std::string& id) {
  return std::any_of(hits.begin(), hits.end(),
                     [&](const SearchHit& hit) { return hit.record.id == id; });
}

TEST(SqliteMemoryStore, AssignsReadableIds) {
  SqliteMemoryStore store(":memory:");
  EXPECT_EQ(store.save(note("one", "first")).id, "S_0001");
  EXPECT_EQ(store.save(note("two", "second")).id, "S_0002");
  EXPECT_EQ(store.save(note("three", "third")).id, "S_0003");
  EXPECT_EQ(store.count(), 3u);
}

TEST(SqliteMemoryStore, SaveReturnsWhatWasStored) {
  SqliteMemoryStore store(":memory:");
  NewRecord record = note("Timeout", "raise to 30s", {"timeout", "결제"});
  record.type = "checkpoint";
  record.task_id = "T_0001";
  record.ref = "C_0001";
  const Record saved = store.save(record);
  EXPECT_GT(saved.created_ms, 0);
  const auto found = store.find_by_ref("C_0001");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, saved.id);
  EXPECT_EQ(found->type, "checkpoint");
  EXPECT_EQ(found->title, "Timeout");
  EXPECT_EQ(found->content, "raise to 30s");
  EXPECT_EQ(found->keywords, (std::vector<std::string>{"timeout", "결제"}));
  EXPECT_EQ(found->task_id, "T_0001");
  EXPECT_EQ(found->ref, "C_0001");
  EXPECT_EQ(found->created_ms, saved.created_ms);
}

TEST(SqliteMemoryStore, SaveIsIdempotentOnRef) {
  SqliteMemoryStore store(":memory:");
  NewRecord first = note("checkpoint", "summary one");
  first.ref = "C_0007";
  const Record a = store.save(first);
  NewRecord second = note("checkpoint again", "summary one");  // a replay: same content
  second.ref = "C_0007";
  const Record b = store.save(second);
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(b.title, "checkpoint");
  EXPECT_EQ(b.content, "summary one");
  EXPECT_EQ(store.count(), 1u);
}

TEST(SqliteMemoryStore, EmptyRefIsNeverDeduplicated) {
  SqliteMemoryStore store(":memory:");
  store.save(note("a", "same"));
  store.save(note("a", "same"));
  EXPECT_EQ(store.count(), 2u);
  EXPECT_FALSE(store.find_by_ref(""));
}

TEST(SqliteMemoryStore, IdsGrowPastFourDigits) {
  SqliteMemoryStore store(":memory:");
  Record last;
  for (int i = 0; i < 10000; ++i) last = store.save(note("n", "x"));
  EXPECT_EQ(last.id, "S_10000");
}

TEST(SqliteMemoryStore, SearchEnglishRanksBestFirst) {
  SqliteMemoryStore store(":memory:");
  store.save(note("Logging cleanup", "remove noisy debug output from the worker"));
  const auto best =
      store.save(note("Payment timeout", "raise the payment gateway timeout to 30 seconds",
                      {"payment", "timeout"}));
  const auto weaker = store.save(note("Retry policy", "a timeout elsewhere triggers retries"));
  const auto hits = store.search("payment timeout", 10);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].record.id, best.id);
  EXPECT_EQ(hits[1].record.id, weaker.id);
  EXPECT_LT(hits[0].score, hits[1].score);
}

TEST(SqliteMemoryStore, SearchStemsEnglish) {
  SqliteMemoryStore store(":memory:");
  const auto saved = store.save(note("Timeouts", "the gateway timeouts were retried"));
  EXPECT_EQ(ids(store.search("timeout retry", 5)), (std::vector<std::string>{saved.id}));
}

TEST(SqliteMemoryStore, SearchRespectsLimit) {
  SqliteMemoryStore store(":memory:");
  for (int i = 0; i < 20; ++i) store.save(note("cache", "cache entry " + std::to_string(i)));
  EXPECT_EQ(store.search("cache", 5).size(), 5u);
  EXPECT_TRUE(store.search("cache", 0).empty());
}

TEST(SqliteMemoryStore, SearchKorean) {
  SqliteMemoryStore store(":memory:");
  store.save(note("로그 정리", "디버그 출력 제거"));
  const auto target = store.save(note("결제 시간 초과를 수정한다", "게이트웨이 설정 변경"));
  for (const char* query : {"시간 초과", "결제", "초과", "시간 초과를", "결제 시간"}) {
    const auto hits = store.search(query, 5);
    ASSERT_FALSE(hits.empty()) << query;
    EXPECT_EQ(hits[0].record.id, target.id) << query;
    EXPECT_EQ(hits.size(), 1u) << query;
  }
}

TEST(SqliteMemoryStore, SearchJapanese) {
  SqliteMemoryStore store(":memory:");
  store.save(note("ログ整理", "デバッグ出力を削除"));
  const auto target = store.save(note("決済のタイムアウトを修正", "ゲートウェイの設定を変更する"));
  EXPECT_TRUE(contains(store.search("タイムアウト", 5), target.id));
  EXPECT_TRUE(contains(store.search("決済", 5), target.id));
  EXPECT_TRUE(contains(store.search("設定", 5), target.id));
  EXPECT_EQ(store.search("決済", 5).size(), 1u);
}

TEST(SqliteMemoryStore, SearchChinese) {
  SqliteMemoryStore store(":memory:");
  store.save(note("清理日志", "删除调试输出"));
  const auto target = store.save(note("修复支付超时问题", "把网关超时改为三十秒"));
  EXPECT_EQ(ids(store.search("超时", 5)), (std::vector<std::string>{target.id}));
  EXPECT_EQ(ids(store.search("支付超时", 5)), (std::vector<std::string>{target.id}));
  EXPECT_TRUE(store.search("天气", 5).empty());
}

TEST(SqliteMemoryStore, SearchMixedScripts) {
  SqliteMemoryStore store(":memory:");
  const auto target = store.save(note("API 결제 timeout", "gateway 설정"));
  EXPECT_TRUE(contains(store.search("API를 고친다", 5), target.id));
  EXPECT_TRUE(contains(store.search("결제 gateway", 5), target.id));
}

TEST(SqliteMemoryStore, EmptyOrPunctuationQueryFindsNothing) {
  SqliteMemoryStore store(":memory:");
  store.save(note("anything", "at all"));
  EXPECT_TRUE(store.search("", 5).empty());
  EXPECT_TRUE(store.search("   ", 5).empty());
  EXPECT_TRUE(store.search("?!.,;:()[]{}\"'*", 5).empty());
  EXPECT_TRUE(store.search("。、「」", 5).empty());
}

TEST(SqliteMemoryStore, FtsOperatorsInQueryDoNotThrow) {
  SqliteMemoryStore store(":memory:");
  const auto target = store.save(note("near and far", "column: value \"quoted\" star*"));
  for (const char* query :
       {"AND",        "OR",   "NOT",          "near AND", "NEAR(", "NEAR(a b, 3)",
        "\"",         "\"\"", "\"unbalanced", "*",        "star*", ":",
        "title:near", "-far", "^near",        "a + b",    "(near", "near)",
        "{title}: x", "💥🔥",   "\xff\xfe",     "%_\\",     "결제%", "_%"}) {
    EXPECT_NO_THROW(store.search(query, 5)) << query;
  }
  EXPECT_TRUE(contains(store.search("near AND", 5), target.id));
  EXPECT_TRUE(contains(store.search("title:near", 5), target.id));
}

TEST(SqliteMemoryStore, WildcardCharactersAreNotPatterns) {
  SqliteMemoryStore store(":memory:");
  store.save(note("결제", "그냥"));
  // "%" and "_" never reach LIKE as wildcards; alone they are no query at all.
  EXPECT_TRUE(store.search("_", 5).empty());
  EXPECT_TRUE(store.search("%", 5).empty());
}

TEST(SqliteMemoryStore, SearchesKeywords) {
  SqliteMemoryStore store(":memory:");
  const auto target = store.save(note("untitled", "nothing here", {"zeppelin"}));
  EXPECT_EQ(ids(store.search("zeppelin", 5)), (std::vector<std::string>{target.id}));
}

TEST(SqliteMemoryStore, NewestByTypeAndTask) {
  SqliteMemoryStore store(":memory:");
  NewRecord a = note("a", "1");
  a.type = "checkpoint";
  a.task_id = "T_1";
  NewRecord b = note("b", "2");
  b.type = "checkpoint";
  b.task_id = "T_2";
  NewRecord c = note("c", "3");
  c.type = "checkpoint";
  c.task_id = "T_1";
  store.save(a);
  const auto saved_b = store.save(b);
  const auto saved_c = store.save(c);
  store.save(note("n", "note"));

  EXPECT_EQ(store.newest("checkpoint")->id, saved_c.id);
  EXPECT_EQ(store.newest("checkpoint", "T_2")->id, saved_b.id);
  EXPECT_EQ(store.newest("checkpoint", "T_1")->id, saved_c.id);
  EXPECT_FALSE(store.newest("checkpoint", "T_9"));
  EXPECT_FALSE(store.newest("nothing"));
}

TEST(SqliteMemoryStore, PersistsAcrossReopen) {
  test::TempDir dir;
  const std::string path = dir.file("memory.db");
  {
    SqliteMemoryStore store(path);
    store.save(note("결제 시간 초과", "persisted"));
  }
  SqliteMemoryStore store(path);
  EXPECT_EQ(store.count(), 1u);
  EXPECT_EQ(store.search("시간 초과", 5).size(), 1u);
  EXPECT_EQ(store.save(note("b", "c")).id, "S_0002");
}

TEST(SqliteMemoryStore, SaveOnReadOnlyDatabaseThrows) {
  test::TempDir dir;
  const std::string path = dir.file("memory.db");
  { SqliteMemoryStore(path).save(note("kept", "before")); }
  SqliteMemoryStore store(path, SqliteDb::Options{.read_only = true});
  EXPECT_EQ(store.count(), 1u);
  EXPECT_EQ(store.search("kept", 5).size(), 1u);
  try {
    store.save(note("lost", "after"));
    FAIL() << "save on a read-only database succeeded";
  } catch (const MemoryError& error) {
    EXPECT_NE(std::string(error.what()).find("readonly"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
  }
  EXPECT_EQ(store.count(), 1u);
}

TEST(SqliteMemoryStore, OpenFailsWhenDirectoryIsMissing) {
  test::TempDir dir;
  EXPECT_THROW(SqliteMemoryStore(dir.file("no-such-dir") + "/memory.db"), MemoryError);
}

}  // namespace
}  // namespace leasefs::memory

namespace leasefs::memory {
namespace {

TEST(SqliteMemoryStoreLimits, AHugeQueryIsBoundedAndStillFindsEarlyTerms) {
  SqliteMemoryStore store(":memory:");
  store.save({"note", "payment timeout", "the gateway needs 30s", {}, "", ""});
  std::string query = "timeout";
  for (int i = 0; i < 20000; ++i) query += " 가나";  // would be 20,000 LIKE scans unbounded
  auto hits = store.search(query, 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].record.title, "payment timeout");
}

TEST(SqliteMemoryStoreLimits, SameRefWithDifferentContentIsAConflict) {
  SqliteMemoryStore store(":memory:");
  store.save({"checkpoint", "C_0001", "old text", {}, "T_1", "C_0001"});
  EXPECT_NO_THROW(store.save({"checkpoint", "C_0001", "old text", {}, "T_1", "C_0001"}));
  EXPECT_THROW(store.save({"checkpoint", "C_0001", "new text", {}, "T_1", "C_0001"}), MemoryError);
  EXPECT_EQ(store.count(), 1u);
}

}  // namespace
}  // namespace leasefs::memory

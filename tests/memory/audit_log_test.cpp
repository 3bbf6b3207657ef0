#include "memory/audit_log.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "base/json_text.hpp"
#include "base/sha256.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::memory {
namespace {

using nlohmann::json;

class AuditLogTest : public ::testing::Test {
 protected:
  std::string log_path() const { return dir_.file("audit.jsonl"); }
  std::string db_path() const { return dir_.file("memory.db"); }

  AuditLog open() { return AuditLog(log_path(), db_path(), AuditLog::Options{.fsync = false}); }

  void append_n(int n) {
    AuditLog log = open();
    for (int i = 0; i < n; ++i) log.append(json{{"type", "mutation"}, {"op", "write"}, {"i", i}});
  }

  std::vector<std::string> read_lines() const {
    std::ifstream in(log_path());
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  void write_lines(const std::vector<std::string>& lines) const {
    std::ofstream out(log_path(), std::ios::trunc);
    for (const auto& line : lines) out << line << '\n';
  }

  test::TempDir dir_;
};

TEST_F(AuditLogTest, AppendedRecordsVerify) {
  append_n(5);
  AuditLog log = open();
  EXPECT_EQ(log.count(), 5u);
  const VerifyResult result = log.verify();
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.records, 5u);
  EXPECT_EQ(result.first_bad_line, 0u);
  EXPECT_TRUE(result.kind.empty());
}

TEST_F(AuditLogTest, ABatchIsConsecutiveRecordsOfOneChain) {
  append_n(2);
  AuditLog log = open();
  auto records =
      log.append_batch({base::JsonText(json{{"type", "a"}}), base::JsonText(json{{"type", "b"}}),
                        base::JsonText(json{{"type", "c"}})});
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].seq, 3u);
  EXPECT_EQ(records[2].seq, 5u);
  log.append(json{{"type", "d"}});
  const VerifyResult result = log.verify();
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.records, 6u);
  EXPECT_TRUE(log.append_batch({}).empty());
}

TEST_F(AuditLogTest, LinesAfterASeqAreTheExactLinesInOrder) {
  append_n(5);
  AuditLog log = open();
  const std::vector<std::string> lines = read_lines();
  auto after = log.lines_after(2, 2);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].seq, 3u);
  EXPECT_EQ(after[0].line, lines[2]);
  EXPECT_EQ(after[1].seq, 4u);
  EXPECT_EQ(after[1].line, lines[3]);
  EXPECT_EQ(log.lines_after(4, 100).size(), 1u);
  EXPECT_TRUE(log.lines_after(5, 100).empty());
  // A damaged record ends the answer: a shipper must not skip past it.
  std::vector<std::string> damaged = lines;
  damaged[3] = "not json";
  write_lines(damaged);
  EXPECT_EQ(open().lines_after(0, 100).size(), 3u);
}

TEST_F(AuditLogTest, EmptyLogVerifies) {
  AuditLog log = open();
  EXPECT_EQ(log.count(), 0u);
  EXPECT_TRUE(log.verify().ok);
}

TEST_F(AuditLogTest, LinesAreChainedAsDocumented) {
  append_n(2);
  const auto lines = read_lines();
  ASSERT_EQ(lines.size(), 2u);
  const json first = json::parse(lines[0]);
  const json second = json::parse(lines[1]);
  EXPECT_EQ(first["seq"], 1);
  EXPECT_EQ(first["prev"], std::string(64, '0'));
  EXPECT_EQ(second["seq"], 2);
  EXPECT_EQ(second["prev"], first["hash"]);
  const json body = {{"seq", first["seq"]},
                     {"ts_ms", first["ts_ms"]},
                     {"event", first["event"]},
                     {"prev", first["prev"]}};
  EXPECT_EQ(first["hash"], base::sha256_hex(body.dump()));
}

TEST_F(AuditLogTest, EditedRecordIsDetected) {
  append_n(5);
  auto lines = read_lines();
  json record = json::parse(lines[2]);
  record["event"]["op"] = "unlink";
  lines[2] = record.dump();
  write_lines(lines);
  const VerifyResult result = open().verify();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.kind, "edited");
  EXPECT_EQ(result.first_bad_line, 3u);
  EXPECT_EQ(result.records, 2u);
}

TEST_F(AuditLogTest, RehashedEditIsDetected) {
  append_n(4);
  auto lines = read_lines();
  json record = json::parse(lines[1]);
  record["event"]["op"] = "unlink";
  record["hash"] = base::sha256_hex(json{
      {"seq", record["seq"]},
      {"ts_ms", record["ts_ms"]},
      {"event", record["event"]},
      {"prev", record["prev"]}}.dump());
  lines[1] = record.dump();
  write_lines(lines);
  const VerifyResult result = open().verify();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.kind, "edited");
  EXPECT_EQ(result.first_bad_line, 3u);  // the next record no longer links to it
}

TEST_F(AuditLogTest, DeletedRecordIsDetected) {
  append_n(5);
  auto lines = read_lines();
  lines.erase(lines.begin() + 1);
  write_lines(lines);
  const VerifyResult result = open().verify();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.kind, "deleted");
  EXPECT_EQ(result.first_bad_line, 2u);
}

TEST_F(AuditLogTest, ReorderedRecordsAreDetected) {
  append_n(5);
  auto lines = read_lines();
  std::swap(lines[2], lines[3]);
  write_lines(lines);
  const VerifyResult result = open().verify();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.kind, "reordered");
  EXPECT_EQ(result.first_bad_line, 3u);
}

TEST_F(AuditLogTest, TruncatedTailIsDetected) {
  append_n(5);
  auto lines = read_lines();
  lines.resize(3);
  write_lines(lines);
  // Verify with the log still open, as the daemon would.
  AuditLog log = open();
  const VerifyResult result = log.verify();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.kind, "truncated");
  EXPECT_EQ(result.first_bad_line, 4u);
  EXPECT_EQ(result.records, 3u);
}

TEST_F(AuditLogTest, TruncationStaysVisibleAfterMoreAppends) {
  append_n(5);
  auto lines = read_lines();
  lines.resize(3);
  write_lines(lines);
  {
    AuditLog log = open();
    EXPECT_EQ(log.append(json{{"type", "after"}}).seq, 6u);
  }
  const VerifyResult result = open().verify();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.kind, "deleted");
  EXPECT_EQ(result.first_bad_line, 4u);
}

TEST_F(AuditLogTest, CutLineIsDetected) {
  append_n(3);
  std::ifstream in(log_path());
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string data = buffer.str();
  data.resize(data.size() - 20);
  std::ofstream(log_path(), std::ios::trunc) << data;
  const VerifyResult result = open().verify();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_line, 3u);
}

TEST_F(AuditLogTest, MalformedLineIsDetected) {
  append_n(3);
  auto lines = read_lines();
  lines[1] = "this is not json";
  write_lines(lines);
  const VerifyResult result = open().verify();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.kind, "malformed");
  EXPECT_EQ(result.first_bad_line, 2u);
}

TEST_F(AuditLogTest, AppendAfterReopenContinuesTheChain) {
  append_n(3);
  {
    AuditLog log = open();
    const AuditRecord record = log.append(json{{"type", "after-restart"}});
    EXPECT_EQ(record.seq, 4u);
    EXPECT_EQ(log.count(), 4u);
  }
  const auto lines = read_lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(json::parse(lines[3])["prev"], json::parse(lines[2])["hash"]);
  const VerifyResult result = open().verify();
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.records, 4u);
}

TEST_F(AuditLogTest, ConcurrentAppendsStayChained) {
  AuditLog log = open();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) log.append(json{{"t", t}, {"i", i}});
    });
  }
  for (auto& thread : threads) thread.join();
  const VerifyResult result = log.verify();
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.records, 200u);
}

TEST_F(AuditLogTest, UnicodeAndInvalidUtf8EventsVerify) {
  {
    AuditLog log = open();
    log.append(json{{"reason", "결제 시간 초과만 고쳐"}});
    log.append(json{{"path", std::string("bad\xff\xfe name")}});
  }
  const VerifyResult result = open().verify();
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.records, 2u);
}

// The writer puts each line together from the event serialized once; every
// line must still be exactly nlohmann's compact dump of the documented object,
// and its hash that of the documented canonical bytes, whatever the event holds.
TEST_F(AuditLogTest, EachLineIsTheDocumentedObjectByteForByte) {
  const std::vector<json> events = {
      json::object(),
      json{{"z", 1}, {"a", -2}, {"m", {{"y", nullptr}, {"b", true}}}},
      json{{"big", std::numeric_limits<std::uint64_t>::max()},
           {"neg", std::numeric_limits<std::int64_t>::min()},
           {"float", 0.1}},
      json{{"text", "quote \" backslash \\ newline \n tab \t nul " + std::string(1, '\0')}},
      json{{"path", std::string("bad\xff\xfe name \xe2\x82")}, {"k", "결제"}},
      json{{"list", json::array({1, "two", json::array(), json::object()})}},
  };
  {
    AuditLog log = open();
    std::vector<base::JsonText> texts;
    for (const json& event : events) texts.emplace_back(event);
    log.append_batch(texts);
  }
  const auto lines = read_lines();
  ASSERT_EQ(lines.size(), events.size());
  for (const std::string& line : lines) {
    const json record = json::parse(line);
    EXPECT_EQ(line, base::json_text(record));
    const json body = {{"seq", record["seq"]},
                       {"ts_ms", record["ts_ms"]},
                       {"event", record["event"]},
                       {"prev", record["prev"]}};
    EXPECT_EQ(record["hash"], base::sha256_hex(base::json_text(body))) << line;
  }
  const VerifyResult result = open().verify();
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.records, events.size());
}

TEST_F(AuditLogTest, FsyncOnByDefault) {
  AuditLog log(log_path(), db_path());
  log.append(json{{"type", "synced"}});
  EXPECT_TRUE(log.verify().ok);
}

}  // namespace
}  // namespace leasefs::memory

#include "memory/sqlite_db.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include "memory/memory_error.hpp"
#include "memory/schema.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::memory {
namespace {

TEST(SqliteDb, OpensFileInWalMode) {
  test::TempDir dir;
  SqliteDb db = open_database(dir.file("memory.db"));
  EXPECT_EQ(db.journal_mode(), "wal");
  EXPECT_EQ(schema_version(db), schema_version_latest());
}

TEST(SqliteDb, InMemoryWorks) {
  SqliteDb db = open_database(":memory:");
  EXPECT_EQ(schema_version(db), schema_version_latest());
}

TEST(SqliteDb, ForeignKeysAreOn) {
  SqliteDb db(":memory:");
  auto stmt = db.prepare("PRAGMA foreign_keys");
  ASSERT_TRUE(stmt.step());
  EXPECT_EQ(stmt.column_int64(0), 1);
}

TEST(SqliteDb, MigrationIsIdempotentAcrossReopen) {
  test::TempDir dir;
  { SqliteDb db = open_database(dir.file("memory.db")); }
  SqliteDb db = open_database(dir.file("memory.db"));
  auto stmt = db.prepare("SELECT COUNT(*) FROM schema_version");
  ASSERT_TRUE(stmt.step());
  EXPECT_EQ(stmt.column_int64(0), 1);
  EXPECT_EQ(schema_version(db), schema_version_latest());
}

TEST(SqliteDb, NewerSchemaIsRefused) {
  test::TempDir dir;
  {
    SqliteDb db = open_database(dir.file("memory.db"));
    db.prepare("UPDATE schema_version SET version = ?").bind(1, schema_version_latest() + 1).run();
  }
  EXPECT_THROW(open_database(dir.file("memory.db")), MemoryError);
}

TEST(SqliteDb, Version3LedgerKeepsItsRowsAndLearnsUndo) {
  test::TempDir dir;
  {
    // A database as schema 3 left it: no 'undo' kind, no requester pid or
    // command, one grant recorded.
    SqliteDb db = open_database(dir.file("memory.db"));
    db.exec(R"sql(
ALTER TABLE requests DROP COLUMN requester_pid;
ALTER TABLE requests DROP COLUMN requester_command;
DROP TABLE ledger;
CREATE TABLE ledger (
  seq INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('grant', 'revoke', 'request', 'approve', 'reject')),
  task_id TEXT NOT NULL, turn INTEGER NOT NULL, actor_uid INTEGER NOT NULL,
  subject_id TEXT NOT NULL, text TEXT NOT NULL, detail_json TEXT NOT NULL DEFAULT '{}',
  created_ms INTEGER NOT NULL);
INSERT INTO ledger VALUES (1, 'grant', 'T_1', 0, 0, 'G_0001', 'fix it', '{}', 5);
UPDATE schema_version SET version = 3;
)sql");
    EXPECT_THROW(db.exec("INSERT INTO ledger VALUES (2, 'undo', 'T_1', 1, 0, 'turn 0', 'x', "
                         "'{}', 6)"),
                 MemoryError);
  }
  SqliteDb db = open_database(dir.file("memory.db"));
  EXPECT_EQ(schema_version(db), schema_version_latest());
  auto row = db.prepare("SELECT kind, subject_id, text, created_ms FROM ledger WHERE seq = 1");
  ASSERT_TRUE(row.step());
  EXPECT_EQ(row.column_text(0), "grant");
  EXPECT_EQ(row.column_text(1), "G_0001");
  EXPECT_EQ(row.column_text(2), "fix it");
  EXPECT_EQ(row.column_int64(3), 5);
  db.exec("INSERT INTO ledger VALUES (2, 'undo', 'T_1', 1, 0, 'turn 0', 'x', '{}', 6)");
  EXPECT_THROW(db.exec("INSERT INTO ledger VALUES (3, 'bogus', 'T_1', 1, 0, 's', 'x', '{}', 7)"),
               MemoryError);
}

TEST(SqliteDb, TransactionCommits) {
  SqliteDb db(":memory:");
  db.exec("CREATE TABLE t (v INTEGER)");
  db.transaction([&] { db.prepare("INSERT INTO t (v) VALUES (?)").bind(1, 7).run(); });
  auto stmt = db.prepare("SELECT v FROM t");
  ASSERT_TRUE(stmt.step());
  EXPECT_EQ(stmt.column_int64(0), 7);
}

TEST(SqliteDb, TransactionRollsBackAndRethrows) {
  SqliteDb db(":memory:");
  db.exec("CREATE TABLE t (v INTEGER)");
  EXPECT_THROW(db.transaction([&] {
    db.prepare("INSERT INTO t (v) VALUES (?)").bind(1, 7).run();
    throw std::logic_error("boom");
  }),
               std::logic_error);
  auto stmt = db.prepare("SELECT COUNT(*) FROM t");
  ASSERT_TRUE(stmt.step());
  EXPECT_EQ(stmt.column_int64(0), 0);
  // The connection is usable afterwards.
  db.transaction([&] { db.prepare("INSERT INTO t (v) VALUES (1)").run(); });
}

// A writer that meets another connection's write lock waits for it (the busy
// handler) and commits once it is released; one that waits past its busy timeout
// fails with MemoryError and writes nothing. Also after the connection was moved.
TEST(SqliteDb, AWriterWaitsForTheLockThenGivesUpAtItsBusyTimeout) {
  test::TempDir dir;
  const std::string path = dir.file("memory.db");
  SqliteDb holder(path);
  holder.exec("CREATE TABLE t (v INTEGER)");
  SqliteDb moved(path, {.busy_timeout = std::chrono::milliseconds(100)});
  SqliteDb writer(std::move(moved));

  holder.exec("BEGIN IMMEDIATE");
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    holder.exec("COMMIT");
  });
  writer.transaction([&] { writer.prepare("INSERT INTO t (v) VALUES (1)").run(); });
  release.join();

  holder.exec("BEGIN IMMEDIATE");
  EXPECT_THROW(writer.transaction([&] { writer.prepare("INSERT INTO t (v) VALUES (2)").run(); }),
               MemoryError);
  holder.exec("COMMIT");
  auto stmt = holder.prepare("SELECT group_concat(v) FROM t");
  ASSERT_TRUE(stmt.step());
  EXPECT_EQ(stmt.column_text(0), "1");
}

TEST(SqliteDb, ErrorsNameTheDatabase) {
  SqliteDb db(":memory:");
  try {
    db.exec("SELECT * FROM no_such_table");
    FAIL() << "expected MemoryError";
  } catch (const MemoryError& error) {
    EXPECT_NE(std::string(error.what()).find("no such table"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(":memory:"), std::string::npos) << error.what();
  }
}

TEST(SqliteDb, OpenFailsWhenParentIsAFile) {
  test::TempDir dir;
  std::ofstream(dir.file("not-a-dir")) << "x";
  EXPECT_THROW(SqliteDb(dir.file("not-a-dir") + "/memory.db"), MemoryError);
}

TEST(SqliteDb, MoveTransfersTheConnection) {
  SqliteDb a(":memory:");
  a.exec("CREATE TABLE t (v INTEGER)");
  SqliteDb b = std::move(a);
  b.exec("INSERT INTO t VALUES (1)");
  auto stmt = b.prepare("SELECT COUNT(*) FROM t");
  ASSERT_TRUE(stmt.step());
  EXPECT_EQ(stmt.column_int64(0), 1);
}

TEST(SqliteDb, ACachedStatementComesBackWithoutItsBindings) {
  SqliteDb db(":memory:");
  {
    auto stmt = db.cached("SELECT ?");
    stmt->bind(1, std::int64_t{5});
    ASSERT_TRUE(stmt->step());
    EXPECT_EQ(stmt->column_int64(0), 5);
  }
  auto again = db.cached("SELECT ?");
  ASSERT_TRUE(again->step());
  EXPECT_TRUE(again->column_is_null(0));
}

// A cached query left half-stepped would keep its read snapshot open, and the
// connection would then see neither another connection's writes nor let a
// checkpoint finish; the handle rewinds it when it goes.
TEST(SqliteDb, ACachedQueryLeftHalfSteppedHoldsNoSnapshot) {
  test::TempDir dir;
  SqliteDb reader = open_database(dir.file("memory.db"));
  SqliteDb writer = open_database(dir.file("memory.db"));
  writer.exec("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1), (2)");
  {
    auto stmt = reader.cached("SELECT v FROM t");
    ASSERT_TRUE(stmt->step());  // one row of two: still in its read transaction
  }
  writer.exec("INSERT INTO t VALUES (3)");
  auto count = reader.prepare("SELECT COUNT(*) FROM t");
  ASSERT_TRUE(count.step());
  EXPECT_EQ(count.column_int64(0), 3);
}

TEST(SqliteDb, CachedStatementsMoveWithTheConnection) {
  SqliteDb a(":memory:");
  a.exec("CREATE TABLE t (v INTEGER)");
  a.cached("INSERT INTO t VALUES (?)")->bind(1, std::int64_t{1}).run();
  SqliteDb b = std::move(a);
  b.cached("INSERT INTO t VALUES (?)")->bind(1, std::int64_t{2}).run();
  auto stmt = b.cached("SELECT SUM(v) FROM t");
  ASSERT_TRUE(stmt->step());
  EXPECT_EQ(stmt->column_int64(0), 3);
}

}  // namespace
}  // namespace leasefs::memory

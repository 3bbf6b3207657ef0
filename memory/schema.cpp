#include "memory/schema.hpp"

#include <array>
#include <string_view>

#include "memory/memory_error.hpp"

namespace leasefs::memory {
namespace {

// Migration N (1-based) takes the schema from version N-1 to N. Append only:
// a released migration is never edited.
constexpr std::array<std::string_view, 5> kMigrations = {
    // 1: records and their two full-text indexes. `seq` is the rowid; `id` is the
    // readable S_0001 form. `ref` is NULL when the caller gave none, so UNIQUE
    // applies only to real refs. Both FTS5 tables are external-content tables
    // over `records`, kept in sync by triggers: `records_fts` indexes words
    // (unicode61, diacritics folded, porter stemming for English) and
    // `records_tri` indexes trigrams, which is what finds CJK text that has no
    // spaces between words.
    R"sql(
CREATE TABLE records (
  seq           INTEGER PRIMARY KEY,
  id            TEXT    NOT NULL UNIQUE,
  type          TEXT    NOT NULL,
  title         TEXT    NOT NULL,
  content       TEXT    NOT NULL,
  keywords_json TEXT    NOT NULL DEFAULT '[]',
  keywords      TEXT    NOT NULL DEFAULT '',
  task_id       TEXT    NOT NULL DEFAULT '',
  ref           TEXT    UNIQUE,
  created_ms    INTEGER NOT NULL
);
CREATE INDEX records_type_task ON records (type, task_id, seq);
CREATE VIRTUAL TABLE records_fts USING fts5 (
  title, content, keywords,
  content = 'records', content_rowid = 'seq',
  tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE records_tri USING fts5 (
  title, content, keywords,
  content = 'records', content_rowid = 'seq',
  tokenize = 'trigram'
);
CREATE TRIGGER records_ai AFTER INSERT ON records BEGIN
  INSERT INTO records_fts (rowid, title, content, keywords)
    VALUES (new.seq, new.title, new.content, new.keywords);
  INSERT INTO records_tri (rowid, title, content, keywords)
    VALUES (new.seq, new.title, new.content, new.keywords);
END;
CREATE TRIGGER records_ad AFTER DELETE ON records BEGIN
  INSERT INTO records_fts (records_fts, rowid, title, content, keywords)
    VALUES ('delete', old.seq, old.title, old.content, old.keywords);
  INSERT INTO records_tri (records_tri, rowid, title, content, keywords)
    VALUES ('delete', old.seq, old.title, old.content, old.keywords);
END;
CREATE TRIGGER records_au AFTER UPDATE ON records BEGIN
  INSERT INTO records_fts (records_fts, rowid, title, content, keywords)
    VALUES ('delete', old.seq, old.title, old.content, old.keywords);
  INSERT INTO records_tri (records_tri, rowid, title, content, keywords)
    VALUES ('delete', old.seq, old.title, old.content, old.keywords);
  INSERT INTO records_fts (rowid, title, content, keywords)
    VALUES (new.seq, new.title, new.content, new.keywords);
  INSERT INTO records_tri (rowid, title, content, keywords)
    VALUES (new.seq, new.title, new.content, new.keywords);
END;
)sql",
    // 2: the ledger. `requests` holds each lease request and its single
    // decision; `ledger` is the append-only list of what was agreed (grants,
    // revokes, requests, approvals, rejections) with the person's own words.
    R"sql(
CREATE TABLE requests (
  seq             INTEGER PRIMARY KEY,
  id              TEXT    NOT NULL UNIQUE,
  task_id         TEXT    NOT NULL,
  turn            INTEGER NOT NULL,
  reason          TEXT    NOT NULL,
  paths_json      TEXT    NOT NULL,
  requester_uid   INTEGER NOT NULL,
  state           TEXT    NOT NULL DEFAULT 'pending'
                  CHECK (state IN ('pending', 'approved', 'rejected')),
  decided_by      INTEGER,
  decision_reason TEXT,
  decided_ms      INTEGER,
  created_ms      INTEGER NOT NULL
);
CREATE INDEX requests_task_state ON requests (task_id, state);
CREATE TABLE ledger (
  seq         INTEGER PRIMARY KEY,
  kind        TEXT    NOT NULL
              CHECK (kind IN ('grant', 'revoke', 'request', 'approve', 'reject')),
  task_id     TEXT    NOT NULL,
  turn        INTEGER NOT NULL,
  actor_uid   INTEGER NOT NULL,
  subject_id  TEXT    NOT NULL,
  text        TEXT    NOT NULL,
  detail_json TEXT    NOT NULL DEFAULT '{}',
  created_ms  INTEGER NOT NULL
);
)sql",
    // 3: replies remembered by idempotency key, and the audit log's anchor:
    // the last seq and hash appended, kept outside the log so that cutting the
    // tail of audit.jsonl can be detected.
    R"sql(
CREATE TABLE idempotency (
  key        TEXT    PRIMARY KEY,
  command    TEXT    NOT NULL,
  reply_json TEXT    NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE TABLE audit_head (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  seq  INTEGER NOT NULL,
  hash TEXT    NOT NULL
);
)sql",
    // 4: the ledger also keeps undos (an approver putting a turn back). SQLite
    // cannot alter a CHECK, so the table is rebuilt with its rows as they are.
    R"sql(
CREATE TABLE ledger_v4 (
  seq         INTEGER PRIMARY KEY,
  kind        TEXT    NOT NULL
              CHECK (kind IN ('grant', 'revoke', 'request', 'approve', 'reject', 'undo')),
  task_id     TEXT    NOT NULL,
  turn        INTEGER NOT NULL,
  actor_uid   INTEGER NOT NULL,
  subject_id  TEXT    NOT NULL,
  text        TEXT    NOT NULL,
  detail_json TEXT    NOT NULL DEFAULT '{}',
  created_ms  INTEGER NOT NULL
);
INSERT INTO ledger_v4 SELECT seq, kind, task_id, turn, actor_uid, subject_id, text, detail_json,
                             created_ms FROM ledger;
DROP TABLE ledger;
ALTER TABLE ledger_v4 RENAME TO ledger;
)sql",
    // 5: who asked: the requesting process's pid and command line (bounded), next
    // to the uid, so an approver sees which program wants the lease.
    R"sql(
ALTER TABLE requests ADD COLUMN requester_pid     INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN requester_command TEXT    NOT NULL DEFAULT '';
)sql",
};

bool has_version_table(SqliteDb& db) {
  auto stmt =
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
  return stmt.step();
}

int read_version(SqliteDb& db) {
  if (!has_version_table(db)) return 0;
  auto stmt = db.prepare("SELECT version FROM schema_version");
  return stmt.step() ? static_cast<int>(stmt.column_int64(0)) : 0;
}

void check_known(SqliteDb& db, int version) {
  if (version > schema_version_latest()) {
    throw MemoryError("schema of " + db.path() + " is version " + std::to_string(version) +
                      ", newer than this build understands (" +
                      std::to_string(schema_version_latest()) + "); upgrade leasefs");
  }
}

}  // namespace

int schema_version_latest() {
  return static_cast<int>(kMigrations.size());
}

int schema_version(SqliteDb& db) {
  return read_version(db);
}

void migrate(SqliteDb& db) {
  const int seen = read_version(db);
  check_known(db, seen);
  if (seen == schema_version_latest()) return;
  if (db.read_only()) {
    throw MemoryError("schema of " + db.path() + " is version " + std::to_string(seen) +
                      " and needs migrating, but it is open read-only");
  }
  db.transaction([&] {
    // Re-read under the write lock: another connection may have migrated.
    db.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
    int version = read_version(db);
    check_known(db, version);
    for (; version < schema_version_latest(); ++version) {
      db.exec(kMigrations[static_cast<std::size_t>(version)]);
    }
    db.exec("DELETE FROM schema_version");
    db.prepare("INSERT INTO schema_version (version) VALUES (?)").bind(1, version).run();
  });
}

SqliteDb open_database(const std::string& path, SqliteDb::Options options) {
  SqliteDb db(path, options);
  migrate(db);
  return db;
}

}  // namespace leasefs::memory

// MemoryStore over <root>/.longrun/memory.db: records with readable ids
// (S_0001, S_0002, ...) and ranked full-text search that finds English words
// and CJK text alike.
//
// Search keeps two FTS5 indexes over the same rows. The word index (unicode61,
// porter) ranks whole words; it cannot see inside a run of Chinese or Japanese,
// which has no spaces, nor past a Korean particle ("초과를"). The trigram index
// finds any substring of three or more code points. Terms of one or two CJK code
// points are too short for trigrams, so they fall back to LIKE. Hits from all
// three are merged by record: the score is the sum of the bm25 scores of the
// indexes that matched (lower is better), with a fixed bonus per LIKE match.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "memory/memory_store.hpp"
#include "memory/sqlite_db.hpp"

namespace leasefs::memory {

class SqliteMemoryStore final : public MemoryStore {
 public:
  // Opens (and migrates) the database at db_path; ":memory:" works. The caller
  // creates the directory. Throws MemoryError.
  explicit SqliteMemoryStore(const std::string& db_path)
      : SqliteMemoryStore(db_path, SqliteDb::Options{}) {}
  SqliteMemoryStore(const std::string& db_path, SqliteDb::Options options);

  std::vector<SearchHit> search(std::string_view query, std::size_t limit) override;
  Record save(const NewRecord& record) override;
  std::optional<Record> find_by_ref(std::string_view ref) override;
  std::optional<Record> newest(std::string_view type, std::string_view task_id = {}) override;
  std::size_t count() override;

 private:
  std::mutex mutex_;  // guards db_
  // Records held: counted at open and on every committed insert (records are
  // never deleted), so that status asks no SQL and waits for no save.
  std::atomic<std::size_t> count_{0};
  SqliteDb db_;
};

}  // namespace leasefs::memory

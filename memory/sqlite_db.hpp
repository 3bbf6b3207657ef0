// A thin RAII layer over SQLite: one move-only connection (SqliteDb) and one
// move-only prepared statement (Statement). Every result code is checked; a
// failure throws MemoryError carrying sqlite3_errmsg and the database path.
//
// Connections open in WAL mode with a busy timeout and foreign keys on, so that
// several connections (in several threads) can share one file: readers never
// block, writers queue behind BEGIN IMMEDIATE for up to the busy timeout.
// Values always travel as bound parameters, never spliced into SQL text.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace leasefs::memory {

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql, std::string db_path);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind_null(int index);

  // Binds each argument to parameters 1, 2, ... in order.
  template <typename... Args>
  Statement& bind_all(Args&&... args) {
    int index = 0;
    (bind(++index, std::forward<Args>(args)), ...);
    return *this;
  }

  // Advances one row: true when a row is available, false when done.
  bool step();
  // Runs a statement that returns no rows to completion.
  void run();
  void reset();
  // reset() that reports nothing: for a handle going away (an error of the last
  // step was reported by step() already).
  void rewind() noexcept;

  // Columns are 0-based, as in SQLite.
  std::int64_t column_int64(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;
  bool column_is_null(int column) const;
  // A TEXT column holding a JSON array of strings (paths, keywords); anything
  // else in it, or in the array, is skipped rather than trusted.
  std::vector<std::string> column_string_list(int column) const;

 private:
  [[noreturn]] void fail(int rc, std::string_view what) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string db_path_;
};

// A statement of SqliteDb's cache, lent for one use: handed out reset and
// without bindings, and reset again when the handle goes, so that a statement
// left half-stepped (by a throw) holds no read snapshot or write lock afterwards.
class CachedStatement {
 public:
  explicit CachedStatement(Statement& statement) noexcept : statement_(&statement) {}
  ~CachedStatement() { statement_->rewind(); }
  CachedStatement(const CachedStatement&) = delete;
  CachedStatement& operator=(const CachedStatement&) = delete;

  Statement& operator*() const noexcept { return *statement_; }
  Statement* operator->() const noexcept { return statement_; }

 private:
  Statement* statement_;
};

class SqliteDb {
 public:
  struct Options {
    // Opens without write access; every write then fails with MemoryError.
    bool read_only = false;
    std::chrono::milliseconds busy_timeout{5000};
  };

  // Opens (creating unless read_only) the database at path; ":memory:" works.
  explicit SqliteDb(std::string path) : SqliteDb(std::move(path), Options{}) {}
  SqliteDb(std::string path, Options options);
  ~SqliteDb();
  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more statements without parameters (schema, pragmas).
  void exec(std::string_view sql);
  Statement prepare(std::string_view sql);
  // The statement for sql, compiled on first use and kept for the connection's
  // life: for those run on every grant or audit batch, where compiling the SQL
  // costs more than running it. One user at a time (callers hold their lock).
  CachedStatement cached(std::string_view sql);

  // Runs fn inside BEGIN IMMEDIATE ... COMMIT. If fn throws, or the commit
  // fails, the transaction is rolled back and the exception propagates.
  // IMMEDIATE takes the write lock up front, so two writers never deadlock on
  // a read-to-write upgrade; the busy timeout makes the second one wait.
  template <typename Fn>
  auto transaction(Fn&& fn) -> decltype(fn()) {
    begin();
    try {
      if constexpr (std::is_void_v<decltype(fn())>) {
        fn();
        commit();
      } else {
        auto result = fn();
        commit();
        return result;
      }
    } catch (...) {
      rollback_noexcept();
      throw;
    }
  }

  // Rows changed by the most recent INSERT/UPDATE/DELETE on this connection.
  std::int64_t changes() const;
  std::string journal_mode();
  const std::string& path() const { return path_; }
  bool read_only() const { return options_.read_only; }

 private:
  void begin();
  void commit();
  void rollback_noexcept() noexcept;
  [[noreturn]] void fail(int rc, std::string_view what) const;

  // The busy handler's own state, on the heap so that its address survives a move.
  struct BusyWait {
    std::chrono::milliseconds timeout;
    std::chrono::steady_clock::time_point since;
  };
  static int on_busy(void* wait, int attempts);

  sqlite3* db_ = nullptr;
  std::string path_;
  Options options_;
  std::unique_ptr<BusyWait> busy_;
  std::map<std::string, Statement, std::less<>> cached_;  // finalized before close
};

}  // namespace leasefs::memory

#include "memory/sqlite_db.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "memory/memory_error.hpp"

namespace leasefs::memory {
namespace {

std::string describe(sqlite3* db, int rc, std::string_view what, const std::string& path) {
  std::string message = "sqlite: ";
  message += what;
  message += " failed on ";
  message += path;
  message += ": ";
  // sqlite3_errmsg describes the most recent failure on the connection; the
  // result code is the authority when they disagree (e.g. after a close).
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  message += " (code ";
  message += std::to_string(rc);
  message += ")";
  return message;
}

// The daemon names its files "/proc/self/fd/N/memory.db" (N: the .longrun
// directory). The stock VFS resolves symlinks in a path as text, and the text
// of that link leads through the mount over the root - or, for a daemon taking
// over a dead mount, into the dead mount. This VFS is the stock one with
// absolute paths taken as given, so the kernel follows the link to the
// directory itself.
int full_pathname_as_given(sqlite3_vfs* vfs, const char* path, int size, char* out) {
  if (path[0] != '/') return sqlite3_vfs_find(nullptr)->xFullPathname(vfs, path, size, out);
  const size_t n = std::strlen(path);
  if (n + 1 > static_cast<size_t>(size)) return SQLITE_CANTOPEN;
  std::memcpy(out, path, n + 1);
  return SQLITE_OK;
}

const char* as_given_vfs() {
  static std::once_flag once;
  static sqlite3_vfs vfs;
  std::call_once(once, [] {
    vfs = *sqlite3_vfs_find(nullptr);
    vfs.zName = "leasefs-path-as-given";
    vfs.xFullPathname = full_pathname_as_given;
    sqlite3_vfs_register(&vfs, 0);
  });
  return vfs.zName;
}

bool is_busy(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

}  // namespace

// ---- Statement ----

Statement::Statement(sqlite3* db, std::string_view sql, std::string db_path)
    : db_(db), db_path_(std::move(db_path)) {
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    std::string what = "prepare \"";
    what += sql;
    what += "\"";
    throw MemoryError(describe(db_, rc, what, db_path_));
  }
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      db_path_(std::move(other.db_path_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    db_path_ = std::move(other.db_path_);
  }
  return *this;
}

void Statement::fail(int rc, std::string_view what) const {
  std::string full(what);
  if (const char* sql = sqlite3_sql(stmt_)) {
    full += " \"";
    full += sql;
    full += "\"";
  }
  throw MemoryError(describe(db_, rc, full, db_path_));
}

Statement& Statement::bind(int index, std::int64_t value) {
  if (const int rc = sqlite3_bind_int64(stmt_, index, value); rc != SQLITE_OK) fail(rc, "bind");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (const int rc = sqlite3_bind_double(stmt_, index, value); rc != SQLITE_OK) fail(rc, "bind");
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies the bytes, so the caller's buffer may go.
  const int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) fail(rc, "bind");
  return *this;
}

Statement& Statement::bind_null(int index) {
  if (const int rc = sqlite3_bind_null(stmt_, index); rc != SQLITE_OK) fail(rc, "bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(rc, "step");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::rewind() noexcept {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Statement::reset() {
  // sqlite3_reset repeats the error of the last step; that error was already
  // reported by step(), so it is not reported twice here.
  sqlite3_reset(stmt_);
  if (const int rc = sqlite3_clear_bindings(stmt_); rc != SQLITE_OK) fail(rc, "clear bindings");
}

std::int64_t Statement::column_int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::column_double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::column_text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) {
    if (sqlite3_errcode(db_) == SQLITE_NOMEM) fail(SQLITE_NOMEM, "column_text");
    return {};
  }
  const int size = sqlite3_column_bytes(stmt_, column);
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

std::vector<std::string> Statement::column_string_list(int column) const {
  std::vector<std::string> out;
  const nlohmann::json list = nlohmann::json::parse(column_text(column), nullptr, false);
  if (!list.is_array()) return out;
  for (const auto& item : list) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

bool Statement::column_is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

// ---- SqliteDb ----

SqliteDb::SqliteDb(std::string path, Options options) : path_(std::move(path)), options_(options) {
  // FULLMUTEX: a connection may be shared by threads; the classes above also
  // serialize their own use. SQLite opens its files with O_CLOEXEC itself.
  int flags = SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_EXRESCODE;
  flags |= options_.read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const int rc = sqlite3_open_v2(path_.c_str(), &db_, flags, as_given_vfs());
  if (rc != SQLITE_OK) {
    std::string message = describe(db_, rc, "open", path_);
    sqlite3_close(db_);
    db_ = nullptr;
    throw MemoryError(message);
  }
  try {
    busy_ = std::make_unique<BusyWait>(BusyWait{options_.busy_timeout, {}});
    if (const int brc = sqlite3_busy_handler(db_, &SqliteDb::on_busy, busy_.get());
        brc != SQLITE_OK) {
      fail(brc, "busy_handler");
    }
    exec("PRAGMA foreign_keys = ON");
    if (!options_.read_only && path_ != ":memory:" && !path_.empty()) {
      // Switching to WAL needs a brief exclusive lock and does not always go
      // through the busy handler, so retry by hand within the busy timeout.
      const auto deadline = std::chrono::steady_clock::now() + options_.busy_timeout;
      for (;;) {
        char* error = nullptr;
        const int wrc = sqlite3_exec(db_, "PRAGMA journal_mode = WAL", nullptr, nullptr, &error);
        sqlite3_free(error);
        if (wrc == SQLITE_OK) break;
        if (!is_busy(wrc) || std::chrono::steady_clock::now() >= deadline) {
          fail(wrc, "PRAGMA journal_mode = WAL");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      if (journal_mode() != "wal") {
        throw MemoryError("sqlite: could not switch " + path_ + " to WAL mode");
      }
    }
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

// Another connection holds the write lock, most often for well under a
// millisecond (the ledger, the audit log's anchor and memory share memory.db).
// sqlite3_busy_timeout() would sleep 1, 2, 5, 10... ms between tries, which alone
// would make a grant that meets an anchor update take milliseconds; this waits
// 20 us first and doubles up to 1 ms, for as long as the busy timeout.
int SqliteDb::on_busy(void* wait, int attempts) {
  auto& w = *static_cast<BusyWait*>(wait);
  const auto now = std::chrono::steady_clock::now();
  if (attempts == 0) w.since = now;
  if (now - w.since >= w.timeout) return 0;  // SQLITE_BUSY to the caller
  const std::chrono::microseconds pause(std::min(20 << std::min(attempts, 6), 1000));
  std::this_thread::sleep_for(pause);
  return 1;
}

SqliteDb::~SqliteDb() {
  // Statements are finalized before their connection is closed (the cached
  // ones here, the others are scoped to calls), so close cannot report
  // SQLITE_BUSY.
  cached_.clear();
  sqlite3_close(db_);
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      options_(other.options_),
      busy_(std::move(other.busy_)),
      cached_(std::move(other.cached_)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    cached_.clear();
    sqlite3_close(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    options_ = other.options_;
    busy_ = std::move(other.busy_);
    cached_ = std::move(other.cached_);
  }
  return *this;
}

void SqliteDb::fail(int rc, std::string_view what) const {
  throw MemoryError(describe(db_, rc, what, path_));
}

void SqliteDb::exec(std::string_view sql) {
  const std::string text(sql);
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  sqlite3_free(error);
  if (rc != SQLITE_OK) {
    std::string what = "exec \"";
    what += sql.substr(0, 120);
    what += "\"";
    fail(rc, what);
  }
}

Statement SqliteDb::prepare(std::string_view sql) {
  return Statement(db_, sql, path_);
}

CachedStatement SqliteDb::cached(std::string_view sql) {
  auto it = cached_.find(sql);
  if (it == cached_.end()) it = cached_.emplace(std::string(sql), prepare(sql)).first;
  return CachedStatement(it->second);
}

std::int64_t SqliteDb::changes() const {
  return sqlite3_changes64(db_);
}

std::string SqliteDb::journal_mode() {
  auto stmt = prepare("PRAGMA journal_mode");
  return stmt.step() ? stmt.column_text(0) : std::string{};
}

void SqliteDb::begin() {
  if (sqlite3_get_autocommit(db_) == 0) {
    throw MemoryError("sqlite: nested transaction on " + path_);
  }
  cached("BEGIN IMMEDIATE")->run();
}

void SqliteDb::commit() {
  cached("COMMIT")->run();
}

void SqliteDb::rollback_noexcept() noexcept {
  // After some errors SQLite has already rolled back; only roll back if a
  // transaction is still open.
  if (sqlite3_get_autocommit(db_) == 0) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

}  // namespace leasefs::memory

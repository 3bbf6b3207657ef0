// One PostgreSQL session through libpq, used by the bridge, the migrations and
// the tests. Values only ever travel as parameters (PQsendQueryParams): no SQL
// text is built from a value anywhere. Every call has a deadline, so a server
// that stops answering (SIGSTOP, a dead link) ends in an error, not a hang; the
// session is then closed and must be opened again.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct pg_conn;
struct pg_result;

namespace leasefs::fleet {

// What went wrong, with the server's SQLSTATE when it sent one ("" otherwise:
// no connection, a timeout).
class PgError : public std::runtime_error {
 public:
  PgError(const std::string& message, std::string sqlstate)
      : std::runtime_error(message), sqlstate_(std::move(sqlstate)) {}
  const std::string& sqlstate() const noexcept { return sqlstate_; }

 private:
  std::string sqlstate_;
};

using PgParam = std::optional<std::string>;  // nullopt is SQL NULL

// The rows of one statement, as text.
class PgResult {
 public:
  explicit PgResult(pg_result* result) : result_(result) {}
  PgResult(PgResult&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
  PgResult& operator=(PgResult&&) = delete;
  PgResult(const PgResult&) = delete;
  ~PgResult();

  int rows() const;
  bool is_null(int row, int col) const;
  std::string text(int row, int col) const;  // "" for NULL
  long long integer(int row, int col) const;

 private:
  pg_result* result_;
};

class PgConnection {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{10000};

  // `conninfo` is a libpq connection string ("host=/run/pg dbname=fleet user=m1
  // password=..."). Throws PgError naming the reason (never the password).
  static PgConnection open(const std::string& conninfo,
                           std::chrono::seconds connect_timeout = std::chrono::seconds(5));
  PgConnection(PgConnection&& other) noexcept : conn_(std::exchange(other.conn_, nullptr)) {}
  PgConnection& operator=(PgConnection&& other) noexcept;
  PgConnection(const PgConnection&) = delete;
  ~PgConnection();

  // One statement with $1.. parameters, as text. Throws PgError.
  PgResult exec(std::string_view sql, const std::vector<PgParam>& params = {},
                std::chrono::milliseconds timeout = kDefaultTimeout);
  // A script of statements without parameters: the schema file, nothing else.
  void exec_script(std::string_view sql, std::chrono::milliseconds timeout = kDefaultTimeout);

  // BEGIN, fn(), COMMIT; ROLLBACK and rethrow when fn throws.
  template <typename Fn>
  void transaction(Fn&& fn) {
    exec("BEGIN");
    try {
      fn();
      exec("COMMIT");
    } catch (...) {
      if (open()) {
        try {
          exec("ROLLBACK");
        } catch (const PgError&) {
        }
      }
      throw;
    }
  }

  // The role this session logged in as.
  std::string user() const;
  // For poll(): readable when the server sent something (a NOTIFY).
  int socket() const;
  // Reads what arrived and drops the notifications; true when at least one came.
  // Throws PgError when the session broke.
  bool take_notifications();
  bool open() const noexcept { return conn_ != nullptr; }

 private:
  explicit PgConnection(pg_conn* conn) : conn_(conn) {}
  PgResult wait_result(std::chrono::milliseconds timeout, std::string_view what);
  [[noreturn]] void fail(const std::string& message);

  pg_conn* conn_;
};

}  // namespace leasefs::fleet

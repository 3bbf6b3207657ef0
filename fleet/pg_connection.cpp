#include "fleet/pg_connection.hpp"

#include <libpq-fe.h>
#include <poll.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

namespace leasefs::fleet {

namespace {

using Clock = std::chrono::steady_clock;

std::string trimmed(const char* text) {
  std::string s = text ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Waits until the session's socket is ready for `events` or the deadline passes.
bool wait_socket(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{.fd = fd, .events = events, .revents = 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

}  // namespace

PgResult::~PgResult() {
  if (result_) PQclear(result_);
}
int PgResult::rows() const {
  return PQntuples(result_);
}
bool PgResult::is_null(int row, int col) const {
  return PQgetisnull(result_, row, col) != 0;
}
std::string PgResult::text(int row, int col) const {
  return std::string(PQgetvalue(result_, row, col),
                     static_cast<size_t>(PQgetlength(result_, row, col)));
}
long long PgResult::integer(int row, int col) const {
  return std::strtoll(PQgetvalue(result_, row, col), nullptr, 10);
}

PgConnection PgConnection::open(const std::string& conninfo, std::chrono::seconds connect_timeout) {
  // The connection string is expanded by libpq itself (expand_dbname); only the
  // timeout is added beside it.
  const std::string timeout = std::to_string(std::max<long long>(2, connect_timeout.count()));
  const char* keys[] = {"dbname", "connect_timeout", "application_name", nullptr};
  const char* values[] = {conninfo.c_str(), timeout.c_str(), "leasefs", nullptr};
  pg_conn* conn = PQconnectdbParams(keys, values, 1);
  if (!conn) throw PgError("PostgreSQL: out of memory opening a session", "");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = trimmed(PQerrorMessage(conn));
    PQfinish(conn);
    throw PgError("PostgreSQL: cannot connect: " + why, "");
  }
  // The server's notices ("already exists, skipping") are not this program's output.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return PgConnection(conn);
}

PgConnection& PgConnection::operator=(PgConnection&& other) noexcept {
  if (this != &other) {
    if (conn_) PQfinish(conn_);
    conn_ = std::exchange(other.conn_, nullptr);
  }
  return *this;
}

PgConnection::~PgConnection() {
  if (conn_) PQfinish(conn_);
}

void PgConnection::fail(const std::string& message) {
  if (conn_) PQfinish(conn_);
  conn_ = nullptr;
  throw PgError(message, "");
}

PgResult PgConnection::exec(std::string_view sql, const std::vector<PgParam>& params,
                            std::chrono::milliseconds timeout) {
  if (!conn_) throw PgError("PostgreSQL: the session is closed", "");
  const std::string text(sql);
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const PgParam& p : params) values.push_back(p ? p->c_str() : nullptr);
  if (!PQsendQueryParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr,
                         values.data(), nullptr, nullptr, 0)) {
    fail("PostgreSQL: cannot send: " + trimmed(PQerrorMessage(conn_)));
  }
  return wait_result(timeout, "a statement");
}

void PgConnection::exec_script(std::string_view sql, std::chrono::milliseconds timeout) {
  if (!conn_) throw PgError("PostgreSQL: the session is closed", "");
  const std::string text(sql);
  if (!PQsendQuery(conn_, text.c_str())) {
    fail("PostgreSQL: cannot send: " + trimmed(PQerrorMessage(conn_)));
  }
  wait_result(timeout, "a script");
}

PgResult PgConnection::wait_result(std::chrono::milliseconds timeout, std::string_view what) {
  const auto deadline = Clock::now() + timeout;
  const int fd = PQsocket(conn_);
  while (PQflush(conn_) == 1) {
    if (!wait_socket(fd, POLLOUT | POLLIN, deadline)) {
      fail("PostgreSQL: no answer within " + std::to_string(timeout.count()) + " ms sending " +
           std::string(what));
    }
    if (!PQconsumeInput(conn_)) fail("PostgreSQL: " + trimmed(PQerrorMessage(conn_)));
  }
  // Every result of the statement is read, so that the session is ready for the
  // next; the first error wins, else the last result is returned.
  pg_result* kept = nullptr;
  std::string error, sqlstate;
  for (;;) {
    while (PQisBusy(conn_)) {
      if (!wait_socket(fd, POLLIN, deadline)) {
        if (kept) PQclear(kept);
        fail("PostgreSQL: no answer within " + std::to_string(timeout.count()) + " ms to " +
             std::string(what));
      }
      if (!PQconsumeInput(conn_)) {
        if (kept) PQclear(kept);
        fail("PostgreSQL: " + trimmed(PQerrorMessage(conn_)));
      }
    }
    pg_result* r = PQgetResult(conn_);
    if (!r) break;
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && error.empty()) {
      error = trimmed(PQresultErrorMessage(r));
      const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      sqlstate = state ? state : "";
    }
    if (kept) PQclear(kept);
    kept = r;
  }
  if (PQstatus(conn_) == CONNECTION_BAD) {
    if (kept) PQclear(kept);
    fail("PostgreSQL: the session broke: " + trimmed(PQerrorMessage(conn_)));
  }
  if (!error.empty()) {
    if (kept) PQclear(kept);
    throw PgError("PostgreSQL: " + error, sqlstate);
  }
  if (!kept) throw PgError("PostgreSQL: no result", "");
  return PgResult(kept);
}

std::string PgConnection::user() const {
  return conn_ ? trimmed(PQuser(conn_)) : "";
}

int PgConnection::socket() const {
  return conn_ ? PQsocket(conn_) : -1;
}

bool PgConnection::take_notifications() {
  if (!conn_) throw PgError("PostgreSQL: the session is closed", "");
  if (!PQconsumeInput(conn_)) fail("PostgreSQL: " + trimmed(PQerrorMessage(conn_)));
  bool any = false;
  while (PGnotify* n = PQnotifies(conn_)) {
    any = true;
    PQfreemem(n);
  }
  return any;
}

}  // namespace leasefs::fleet

// The ledger: what people agreed, in their own words. Grants, revokes, lease
// requests and the single decision on each request live in memory.db.
//
// Each Ledger has its own connection, so several instances (in several threads
// or processes) may share one file. A decision is one conditional UPDATE
// (state must still be 'pending' and the turn must be the current one) inside
// a BEGIN IMMEDIATE transaction that also appends the ledger row, so of any
// number of concurrent decisions on one request exactly one succeeds (I8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memory/ledger_error.hpp"
#include "memory/ledger_types.hpp"
#include "memory/sqlite_db.hpp"

namespace leasefs::memory {

class Ledger {
 public:
  // Opens (and migrates) the database at db_path. Throws MemoryError.
  explicit Ledger(const std::string& db_path) : Ledger(db_path, SqliteDb::Options{}) {}
  Ledger(const std::string& db_path, SqliteDb::Options options);

  LedgerEntry record_grant(const GrantRecord& grant);
  LedgerEntry record_revoke(const RevokeRecord& revoke);
  // An undo, recorded before it touches the tree (subject_id "turn N").
  LedgerEntry record_undo(const UndoRecord& undo);

  // Records a pending request (R_0001, ...) and its ledger row.
  Request create_request(std::string_view task_id, std::int64_t turn, std::string_view reason,
                         const std::vector<std::string>& paths, std::uint32_t requester_uid);
  // The same, saying which process asked (pid, command line).
  Request create_request(std::string_view task_id, std::int64_t turn, std::string_view reason,
                         const std::vector<std::string>& paths, std::uint32_t requester_uid,
                         std::int64_t requester_pid, std::string_view requester_command);

  // Approves or rejects a pending request of the current turn, exactly once.
  // Throws LedgerError (not_found, already_decided, stale) when refused, and
  // MemoryError when storage fails.
  DecisionOutcome decide(std::string_view request_id, Decision decision,
                         std::string_view current_task_id, std::int64_t current_turn,
                         std::uint32_t approver_uid, std::string_view reason_text);

  // Pending requests of a task, oldest first. May include requests from older
  // turns; decide() refuses those as stale.
  std::vector<Request> pending_requests(std::string_view task_id);
  // The highest grant number recorded ("G_0007" -> 7), 0 if none: grant ids are
  // allocated above it, so a grant recorded just before a crash is never reused.
  std::int64_t last_grant_number();
  std::optional<Request> find_request(std::string_view request_id);

  // The newest limit entries, oldest first.
  std::vector<LedgerEntry> entries(std::size_t limit);

 private:
  LedgerEntry append(LedgerEntry entry);        // caller holds mutex_ and a transaction
  LedgerEntry append_alone(LedgerEntry entry);  // takes mutex_ and its own transaction
  std::optional<Request> find_request_locked(std::string_view request_id);

  std::mutex mutex_;  // guards db_
  SqliteDb db_;
};

}  // namespace leasefs::memory

// What the ledger records: lease requests and their decisions, grants and
// revokes, each with the words the person used.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leasefs::memory {

enum class Decision { approve, reject };

enum class RequestState { pending, approved, rejected };

std::string_view to_string(RequestState state);

struct Request {
  std::string id;  // R_0001, R_0002, ...
  std::string task_id;
  std::int64_t turn = 0;  // the turn the request was made in; it can be decided only then
  std::string reason;     // the requester's words
  std::vector<std::string> paths;
  std::uint32_t requester_uid = 0;
  std::int64_t requester_pid = 0;  // 0 when unknown (a request from before schema 5)
  std::string requester_command;   // its /proc/<pid>/cmdline, bounded; agent text
  RequestState state = RequestState::pending;
  std::optional<std::uint32_t> decided_by;
  std::string decision_reason;  // the approver's words; empty when none given
  std::int64_t created_ms = 0;
  std::int64_t decided_ms = 0;  // 0 while pending

  bool operator==(const Request&) const = default;
};

struct GrantRecord {
  std::string grant_id;
  std::string task_id;
  std::int64_t turn = 0;
  std::uint32_t approver_uid = 0;
  std::string reason;  // the approver's words
  std::vector<std::string> paths;
  std::vector<std::string> ops;
  std::int64_t ttl_ms = 0;     // 0: no time limit beyond the turn
  std::int64_t issued_ms = 0;  // 0: now
};

struct RevokeRecord {
  std::string grant_id;  // empty: every grant of the turn
  std::string task_id;
  std::int64_t turn = 0;
  std::uint32_t actor_uid = 0;
  std::string reason;  // why, e.g. "turn advanced" or the person's words
};

struct UndoRecord {
  std::string task_id;
  std::int64_t turn = 0;         // the turn in force when the undo ran
  std::int64_t undone_turn = 0;  // the turn put back
  std::uint32_t actor_uid = 0;
  std::string reason;              // the approver's words
  std::vector<std::string> paths;  // empty: everything the turn changed
  bool force = false;
};

// One row of the ledger. kind is one of "grant", "revoke", "request",
// "approve", "reject", "undo"; subject_id is the grant or request id; text is the
// original words; detail holds the rest (paths, ops, ttl, ...).
struct LedgerEntry {
  std::int64_t seq = 0;
  std::string kind;
  std::string task_id;
  std::int64_t turn = 0;
  std::uint32_t actor_uid = 0;
  std::string subject_id;
  std::string text;
  nlohmann::json detail = nlohmann::json::object();
  std::int64_t created_ms = 0;
};

// A successful decision: the request as it now stands and the ledger row.
struct DecisionOutcome {
  Request request;
  LedgerEntry entry;
};

}  // namespace leasefs::memory

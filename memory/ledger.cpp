#include "memory/ledger.hpp"

#include "base/clock.hpp"
#include "base/enum_names.hpp"
#include "base/json_text.hpp"
#include "memory/memory_error.hpp"
#include "memory/record_id.hpp"
#include "memory/schema.hpp"

namespace leasefs::memory {
namespace {

using nlohmann::json;

constexpr std::string_view kRequestColumns =
    "id, task_id, turn, reason, paths_json, requester_uid, state, decided_by, "
    "decision_reason, decided_ms, created_ms, requester_pid, requester_command";

constexpr std::string_view kEntryColumns =
    "seq, kind, task_id, turn, actor_uid, subject_id, text, detail_json, created_ms";

constexpr base::EnumNames<RequestState, 3> kStateNames{{
    {RequestState::pending, "pending"},
    {RequestState::approved, "approved"},
    {RequestState::rejected, "rejected"},
}};

RequestState parse_state(const std::string& text) {
  if (auto state = base::enum_from_name(kStateNames, text)) return *state;
  throw MemoryError("ledger: unknown request state '" + text + "'");
}

Request read_request(const Statement& stmt) {
  Request request;
  request.id = stmt.column_text(0);
  request.task_id = stmt.column_text(1);
  request.turn = stmt.column_int64(2);
  request.reason = stmt.column_text(3);
  request.paths = stmt.column_string_list(4);
  request.requester_uid = static_cast<std::uint32_t>(stmt.column_int64(5));
  request.state = parse_state(stmt.column_text(6));
  if (!stmt.column_is_null(7))
    request.decided_by = static_cast<std::uint32_t>(stmt.column_int64(7));
  request.decision_reason = stmt.column_text(8);
  request.decided_ms = stmt.column_int64(9);
  request.created_ms = stmt.column_int64(10);
  request.requester_pid = stmt.column_int64(11);
  request.requester_command = stmt.column_text(12);
  return request;
}

LedgerEntry read_entry(const Statement& stmt) {
  LedgerEntry entry;
  entry.seq = stmt.column_int64(0);
  entry.kind = stmt.column_text(1);
  entry.task_id = stmt.column_text(2);
  entry.turn = stmt.column_int64(3);
  entry.actor_uid = static_cast<std::uint32_t>(stmt.column_int64(4));
  entry.subject_id = stmt.column_text(5);
  entry.text = stmt.column_text(6);
  entry.detail = json::parse(stmt.column_text(7), nullptr, false);
  if (entry.detail.is_discarded()) entry.detail = json::object();
  entry.created_ms = stmt.column_int64(8);
  return entry;
}

std::string describe_decision(const Request& request) {
  std::string text = std::string(to_string(request.state));
  if (request.decided_by) text += " by uid " + std::to_string(*request.decided_by);
  if (!request.decision_reason.empty()) text += " (\"" + request.decision_reason + "\")";
  return text;
}

}  // namespace

std::string_view to_string(RequestState state) {
  return base::enum_name(kStateNames, state);
}

Errc errc_of(DecisionError error) noexcept {
  switch (error) {
    case DecisionError::not_found:
      return Errc::kNotFound;
    case DecisionError::already_decided:
      return Errc::kAlreadyDecided;
    case DecisionError::stale:
      return Errc::kStaleRequest;
  }
  return Errc::kInternal;
}

Ledger::Ledger(const std::string& db_path, SqliteDb::Options options)
    : db_(open_database(db_path, options)) {}

LedgerEntry Ledger::append(LedgerEntry entry) {
  if (entry.created_ms == 0) entry.created_ms = base::now_ms();
  auto stmt = db_.cached(
      "INSERT INTO ledger (kind, task_id, turn, actor_uid, subject_id, text, detail_json, "
      "created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq");
  stmt->bind_all(entry.kind, entry.task_id, entry.turn, static_cast<std::int64_t>(entry.actor_uid),
                 entry.subject_id, entry.text, base::json_text(entry.detail), entry.created_ms);
  if (!stmt->step()) throw MemoryError("ledger: insert returned no row on " + db_.path());
  entry.seq = stmt->column_int64(0);
  stmt->run();
  return entry;
}

LedgerEntry Ledger::append_alone(LedgerEntry entry) {
  std::lock_guard lock(mutex_);
  return db_.transaction([&] { return append(std::move(entry)); });
}

LedgerEntry Ledger::record_grant(const GrantRecord& grant) {
  return append_alone(
      {.kind = "grant",
       .task_id = grant.task_id,
       .turn = grant.turn,
       .actor_uid = grant.approver_uid,
       .subject_id = grant.grant_id,
       .text = grant.reason,
       .detail = {{"paths", grant.paths}, {"ops", grant.ops}, {"ttl_ms", grant.ttl_ms}},
       .created_ms = grant.issued_ms});
}

LedgerEntry Ledger::record_revoke(const RevokeRecord& revoke) {
  return append_alone({.kind = "revoke",
                       .task_id = revoke.task_id,
                       .turn = revoke.turn,
                       .actor_uid = revoke.actor_uid,
                       .subject_id = revoke.grant_id,
                       .text = revoke.reason,
                       .detail = {{"all_of_turn", revoke.grant_id.empty()}}});
}

LedgerEntry Ledger::record_undo(const UndoRecord& undo) {
  return append_alone(
      {.kind = "undo",
       .task_id = undo.task_id,
       .turn = undo.turn,
       .actor_uid = undo.actor_uid,
       .subject_id = "turn " + std::to_string(undo.undone_turn),
       .text = undo.reason,
       .detail = {
           {"undone_turn", undo.undone_turn}, {"paths", undo.paths}, {"force", undo.force}}});
}

Request Ledger::create_request(std::string_view task_id, std::int64_t turn, std::string_view reason,
                               const std::vector<std::string>& paths, std::uint32_t requester_uid) {
  return create_request(task_id, turn, reason, paths, requester_uid, 0, {});
}

Request Ledger::create_request(std::string_view task_id, std::int64_t turn, std::string_view reason,
                               const std::vector<std::string>& paths, std::uint32_t requester_uid,
                               std::int64_t requester_pid, std::string_view requester_command) {
  std::lock_guard lock(mutex_);
  return db_.transaction([&] {
    std::int64_t seq = 1;
    {
      auto next = db_.prepare("SELECT COALESCE(MAX(seq), 0) + 1 FROM requests");
      if (next.step()) seq = next.column_int64(0);
    }
    Request request;
    request.id = make_record_id("R", seq);
    request.task_id = task_id;
    request.turn = turn;
    request.reason = reason;
    request.paths = paths;
    request.requester_uid = requester_uid;
    request.requester_pid = requester_pid;
    request.requester_command = requester_command;
    request.created_ms = base::now_ms();
    auto insert = db_.prepare(
        "INSERT INTO requests (seq, id, task_id, turn, reason, paths_json, requester_uid, state, "
        "created_ms, requester_pid, requester_command) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)");
    insert.bind_all(seq, request.id, request.task_id, request.turn, request.reason,
                    base::json_text(json(request.paths)), static_cast<std::int64_t>(requester_uid),
                    request.created_ms, request.requester_pid, request.requester_command);
    insert.run();

    json detail = {{"paths", request.paths}};
    if (requester_pid != 0) {
      detail["pid"] = requester_pid;
      detail["command"] = request.requester_command;
    }
    append({.kind = "request",
            .task_id = request.task_id,
            .turn = turn,
            .actor_uid = requester_uid,
            .subject_id = request.id,
            .text = request.reason,
            .detail = std::move(detail),
            .created_ms = request.created_ms});
    return request;
  });
}

DecisionOutcome Ledger::decide(std::string_view request_id, Decision decision,
                               std::string_view current_task_id, std::int64_t current_turn,
                               std::uint32_t approver_uid, std::string_view reason_text) {
  const std::string_view new_state = decision == Decision::approve ? "approved" : "rejected";
  std::lock_guard lock(mutex_);
  return db_.transaction([&] {
    const std::int64_t decided_ms = base::now_ms();
    auto update = db_.prepare(
        "UPDATE requests SET state = ?, decided_by = ?, decision_reason = ?, decided_ms = ? "
        "WHERE id = ? AND state = 'pending' AND turn = ? AND task_id = ?");
    update.bind_all(new_state, static_cast<std::int64_t>(approver_uid), reason_text, decided_ms,
                    request_id, current_turn, current_task_id);
    update.run();
    const bool decided = db_.changes() == 1;

    std::optional<Request> request = find_request_locked(request_id);
    if (!request) {
      throw LedgerError(DecisionError::not_found,
                        "no request " + std::string(request_id) +
                            "; list pending requests with `leasectl status`");
    }
    if (!decided) {
      if (request->state != RequestState::pending) {
        throw LedgerError(DecisionError::already_decided,
                          "request " + request->id + " was already " + describe_decision(*request) +
                              "; a request is decided once — ask for a new one if needed",
                          request);
      }
      if (request->task_id != current_task_id) {
        throw LedgerError(DecisionError::stale,
                          "request " + request->id + " belongs to task " + request->task_id +
                              ", not the current task " + std::string(current_task_id) +
                              "; ask again with `leasectl request`",
                          request);
      }
      throw LedgerError(DecisionError::stale,
                        "request " + request->id + " was made in turn " +
                            std::to_string(request->turn) + " but this is turn " +
                            std::to_string(current_turn) +
                            "; a request is valid only in its own turn — ask again with "
                            "`leasectl request`",
                        request);
    }

    LedgerEntry entry{.kind = decision == Decision::approve ? "approve" : "reject",
                      .task_id = request->task_id,
                      .turn = current_turn,
                      .actor_uid = approver_uid,
                      .subject_id = request->id,
                      .text = std::string(reason_text),
                      .detail = {{"request_reason", request->reason}, {"paths", request->paths}},
                      .created_ms = decided_ms};
    return DecisionOutcome{std::move(*request), append(std::move(entry))};
  });
}

std::optional<Request> Ledger::find_request_locked(std::string_view request_id) {
  auto stmt = db_.prepare("SELECT " + std::string(kRequestColumns) + " FROM requests WHERE id = ?");
  stmt.bind(1, request_id);
  if (stmt.step()) return read_request(stmt);
  return std::nullopt;
}

std::optional<Request> Ledger::find_request(std::string_view request_id) {
  std::lock_guard lock(mutex_);
  return find_request_locked(request_id);
}

std::vector<Request> Ledger::pending_requests(std::string_view task_id) {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare("SELECT " + std::string(kRequestColumns) +
                          " FROM requests WHERE task_id = ? AND state = 'pending' ORDER BY seq");
  stmt.bind(1, task_id);
  std::vector<Request> requests;
  while (stmt.step()) requests.push_back(read_request(stmt));
  return requests;
}

std::int64_t Ledger::last_grant_number() {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare(
      "SELECT COALESCE(MAX(CAST(substr(subject_id, 3) AS INTEGER)), 0) FROM ledger "
      "WHERE kind = 'grant' AND subject_id LIKE 'G\\_%' ESCAPE '\\'");
  return stmt.step() ? stmt.column_int64(0) : 0;
}

std::vector<LedgerEntry> Ledger::entries(std::size_t limit) {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare("SELECT " + std::string(kEntryColumns) +
                          " FROM (SELECT * FROM ledger ORDER BY seq DESC LIMIT ?) ORDER BY seq");
  stmt.bind(1, static_cast<std::int64_t>(limit));
  std::vector<LedgerEntry> result;
  while (stmt.step()) result.push_back(read_entry(stmt));
  return result;
}

}  // namespace leasefs::memory

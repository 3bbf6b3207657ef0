// What the use cases answer: plain values, one struct per command. The service
// never renders them; the control plane turns them into the wire's JSON
// (control/render.hpp), so the reply format lives in one room.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/disk_reserve.hpp"
#include "gate/task_state.hpp"
#include "gate/task_status.hpp"
#include "journal/diff.hpp"
#include "journal/undo.hpp"
#include "memory/ledger_types.hpp"
#include "memory/record.hpp"
#include "service/fleet_link.hpp"
#include "service/foreign_mount.hpp"

namespace leasefs::service {

// Ask mode as it stands for the current task (gate/ask.hpp).
struct AskStatus {
  int64_t timeout_ms = 0;
  bool on = false;
  bool set_by_task = false;  // else the mount's --ask
  size_t waiting = 0;        // operations parked on a person

  bool operator==(const AskStatus&) const = default;
};

// A pending request of this turn, and whether an operation is parked on it.
struct PendingRequest {
  memory::Request request;
  bool ask = false;

  bool operator==(const PendingRequest&) const = default;
};

struct StatusReport {
  gate::TaskState task;  // no task when !task.has_task()
  uint64_t turn = 0;
  std::vector<gate::Grant> grants;  // in force: this turn's, not expired
  std::vector<PendingRequest> pending_requests;
  bool pending_checkpoint = false;
  size_t memory_records = 0;
  // Refusals as the file plane reported them, newest last (event payloads).
  std::vector<nlohmann::json> recent_refusals;
  uint64_t refusals_total = 0;
  // The daemon's file plane (descriptors, busy processes), when it gave one.
  std::optional<nlohmann::json> file_plane;
  // Whether the audit's heads are signed at each turn's end, and with what key.
  std::optional<nlohmann::json> signed_heads;
  // The disk holding the root, when the daemon keeps a reserve on it.
  std::optional<base::DiskReserve::Status> disk;
  std::vector<std::string> protected_paths;
  AskStatus ask;
  std::vector<ForeignMount> foreign_mounts;  // mounts over the tree no approver made
  std::optional<FleetLink> fleet;            // what a fleet bridge last reported, if one did
  nlohmann::json policy;                     // the central policy in force (service_policy.cpp)
  std::string state_error;                   // empty unless state.json could not be read
  std::string repair;                        // how to repair it, with state_error

  // Every field: status's reply is reused only for a report equal to the one it
  // was rendered from (control/status_reply.hpp), so a field added later is compared too.
  bool operator==(const StatusReport&) const = default;
};

struct StartResult {
  gate::TaskState task;
  std::vector<memory::SearchHit> memories;  // what memory knew before the task began
};

// turn and end-turn: the turn now, and how many grants ended with the old one.
struct TurnResult {
  uint64_t turn = 0;
  size_t revoked = 0;
};

struct GrantResult {
  gate::Grant grant;
  uint64_t turn = 0;
};

struct RevokeResult {
  size_t revoked = 0;
  bool leased = false;  // some grant is still in force
};

struct RequestResult {
  memory::Request request;
  // Set when a central auto_approve rule approved it at once (its source names the rule).
  std::optional<gate::Grant> auto_grant;
  std::string auto_source;
};

struct ApproveResult {
  memory::Request request;
  gate::Grant grant;
};

struct RejectResult {
  memory::Request request;
};

struct CheckpointResult {
  std::string checkpoint_id;
  std::string record_id;
  gate::TaskStatus status = gate::TaskStatus::kPaused;
  std::string text;  // the resume record as saved
};

// The checkpoint a resumed task starts from.
struct ResumedCheckpoint {
  std::string id;
  std::string record_id;
  std::string text;
};

struct ResumeResult {
  gate::TaskState task;
  uint64_t turn = 0;
  std::optional<ResumedCheckpoint> checkpoint;
  std::vector<memory::SearchHit> memories;
};

struct TransitionResult {
  gate::TaskState task;
  gate::TaskStatus from = gate::TaskStatus::kInProgress;
  gate::TaskStatus to = gate::TaskStatus::kInProgress;
};

struct MemorySearchResult {
  std::string query;
  std::vector<memory::SearchHit> hits;
};

struct MemorySaveResult {
  std::string id;
  std::string title;
};

struct SetAskResult {
  AskStatus ask;
};

// diff: the journal's own report (journal/diff.hpp), passed through whole.
struct DiffResult {
  journal::DiffReport report;
  bool journal_on = true;  // false: mounted with --journal=off, nothing is kept
};

// undo: the journal's own report (journal/undo.hpp), and where the undo's own
// changes went.
struct UndoResult {
  journal::UndoReport report;
  uint64_t journaled_in_turn = 0;
  bool can_be_undone = false;  // not when the current turn itself was put back
  std::string warning;         // said before it happens too (a dry run)
};

// journal.prune: what the turns deleted held (journal/journal.hpp, prune_older).
struct PruneResult {
  uint64_t turn = 0;  // the current one, never deleted
  bool dry_run = false;
  std::vector<journal::Journal::Pruned> pruned;
};

// The journal's part of status (service/journal_use_cases.hpp).
struct JournalStatus {
  bool enabled = false;
  uint64_t turn = 0;
  uint64_t bytes = 0;
  size_t turns_kept = 0;
  std::vector<std::string> not_undoable;
  uint64_t older_bytes = 0;  // what the turns before `turn` hold (journal.prune frees it)

  bool operator==(const JournalStatus&) const = default;
};

}  // namespace leasefs::service

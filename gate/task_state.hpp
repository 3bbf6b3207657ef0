// The state file's content: the current task (if any), the turn counter and the
// lease in force. Serialized as schema-versioned JSON to <root>/.longrun/state.json.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gate/grant.hpp"
#include "gate/task_status.hpp"

namespace leasefs::gate {

inline constexpr int kStateSchemaVersion = 1;

struct TransitionRecord {
  TaskStatus from = TaskStatus::kPending;
  TaskStatus to = TaskStatus::kPending;
  std::string reason;
  int64_t at_ms = 0;

  bool operator==(const TransitionRecord&) const = default;
};

struct TaskState {
  // Global, across tasks: only grows.
  uint64_t turn_index = 0;
  uint64_t grant_seq = 0;       // last grant number issued (ids never repeat)
  uint64_t checkpoint_seq = 0;  // last checkpoint number issued

  // The task; task_id is empty when none was started.
  std::string task_id;
  std::string description;
  std::string done_when;
  std::vector<std::string> keywords;
  TaskStatus status = TaskStatus::kPending;
  std::string current_step;
  std::string next_step;
  std::string last_checkpoint_id;
  std::vector<TransitionRecord> history;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;

  // The lease: grants in force. Only grants whose turn == turn_index count.
  std::vector<Grant> grants;

  // Ask mode for this task (gate/ask.hpp), in milliseconds, 0 off; unset: the
  // mount's --ask.
  std::optional<int64_t> ask_ms;

  bool has_task() const noexcept { return !task_id.empty(); }
  bool operator==(const TaskState&) const = default;
};

nlohmann::json to_json(const Grant& grant);
nlohmann::json to_json(const TaskState& state);
// Every member but "grants" (state/state_text.hpp keeps each grant's text).
nlohmann::json to_json_except_grants(const TaskState& state);
// Throws std::invalid_argument naming the first bad field. A state from before
// schema versions (no "schema_version") is accepted; its "access_mode" is ignored,
// so an old "writable" mark never opens writes.
TaskState task_state_from_json(const nlohmann::json& json);

}  // namespace leasefs::gate

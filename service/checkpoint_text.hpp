// The text of a checkpoint: a human part a person (or the next agent) reads to
// pick up the work, ending in one machine-readable marker line:
//   <!-- longrun-state: {"task_id":…,"status":…,"access_mode":"read_only",…} -->
// The marker is always the last line, and its JSON has '<', '>' and '&' escaped,
// so free text (which only ever comes before it) cannot imitate or cut it; only
// the last line is read back.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "gate/task_state.hpp"

namespace leasefs::service {

struct CheckpointNotes {
  std::string summary;
  std::string verified;
  std::string discarded;
  std::string needs_approval;
};

// `state` is the state as it will be saved (status, steps, last checkpoint id set).
std::string render_checkpoint(const gate::TaskState& state, const CheckpointNotes& notes);

// The record memory keeps when a task ends (completed or failed), with a marker
// line like a checkpoint's; its ref is task_end_ref(task_id).
std::string render_task_end(const gate::TaskState& state, const std::string& reason);
std::string task_end_ref(const std::string& task_id);

// A checkpoint text cut around its closing advice, the line before the marker
// ("Writes are closed: this checkpoint revoked the lease. ..."), so that a client
// can say something else there: notes + closing + marker == text, where closing
// is that line with its newline. A text without it (a task's end record) is all notes.
struct CheckpointParts {
  std::string notes;
  std::string closing;
  std::string marker;
};
CheckpointParts checkpoint_parts(std::string_view text);

// The marker on the last line of a checkpoint text, or nullopt when that line is
// not one or its payload is not a JSON object.
std::optional<nlohmann::json> parse_checkpoint_marker(std::string_view text);

}  // namespace leasefs::service

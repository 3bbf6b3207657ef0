#include "gate/task_status.hpp"

#include <string>

#include "base/error.hpp"

namespace leasefs::gate {

std::string_view to_string(TaskStatus status) noexcept {
  switch (status) {
    case TaskStatus::kPending:
      return "pending";
    case TaskStatus::kInProgress:
      return "in_progress";
    case TaskStatus::kPaused:
      return "paused";
    case TaskStatus::kBlocked:
      return "blocked";
    case TaskStatus::kWaitingVerification:
      return "waiting_verification";
    case TaskStatus::kCompleted:
      return "completed";
    case TaskStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

std::optional<TaskStatus> parse_status(std::string_view text) noexcept {
  for (TaskStatus s : kAllStatuses) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

bool is_terminal(TaskStatus status) noexcept {
  return status == TaskStatus::kCompleted || status == TaskStatus::kFailed;
}

bool can_transition(TaskStatus from, TaskStatus to) noexcept {
  using S = TaskStatus;
  switch (from) {
    case S::kPending:
      return to == S::kInProgress;
    case S::kInProgress:
      return to == S::kPaused || to == S::kBlocked || to == S::kWaitingVerification ||
             to == S::kCompleted || to == S::kFailed;
    case S::kPaused:
    case S::kBlocked:
      return to == S::kInProgress || to == S::kFailed;
    case S::kWaitingVerification:
      return to == S::kInProgress || to == S::kCompleted || to == S::kFailed;
    case S::kCompleted:
    case S::kFailed:
      return false;
  }
  return false;
}

void check_transition(TaskStatus from, TaskStatus to) {
  if (can_transition(from, to)) return;
  std::string msg =
      "cannot go from " + std::string(to_string(from)) + " to " + std::string(to_string(to));
  if (is_terminal(from)) msg += ": " + std::string(to_string(from)) + " is terminal";
  throw Error(Errc::kInvalidTransition, msg);
}

}  // namespace leasefs::gate

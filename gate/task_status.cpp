#include "gate/task_status.hpp"

#include <string>

#include "base/enum_names.hpp"
#include "base/error.hpp"

namespace leasefs::gate {

namespace {
constexpr base::EnumNames<TaskStatus, 7> kStatusNames{{
    {TaskStatus::kPending, "pending"},
    {TaskStatus::kInProgress, "in_progress"},
    {TaskStatus::kPaused, "paused"},
    {TaskStatus::kBlocked, "blocked"},
    {TaskStatus::kWaitingVerification, "waiting_verification"},
    {TaskStatus::kCompleted, "completed"},
    {TaskStatus::kFailed, "failed"},
}};
}  // namespace

std::string_view to_string(TaskStatus status) noexcept {
  return base::enum_name(kStatusNames, status);
}

std::optional<TaskStatus> parse_status(std::string_view text) noexcept {
  return base::enum_from_name(kStatusNames, text);
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

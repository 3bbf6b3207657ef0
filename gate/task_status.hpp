// The seven task statuses and the one whitelist of transitions between them.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace leasefs::gate {

enum class TaskStatus {
  kPending,
  kInProgress,
  kPaused,
  kBlocked,
  kWaitingVerification,
  kCompleted,
  kFailed,
};

inline constexpr std::array<TaskStatus, 7> kAllStatuses{
    TaskStatus::kPending, TaskStatus::kInProgress,          TaskStatus::kPaused,
    TaskStatus::kBlocked, TaskStatus::kWaitingVerification, TaskStatus::kCompleted,
    TaskStatus::kFailed,
};

std::string_view to_string(TaskStatus status) noexcept;
std::optional<TaskStatus> parse_status(std::string_view text) noexcept;

bool is_terminal(TaskStatus status) noexcept;
bool can_transition(TaskStatus from, TaskStatus to) noexcept;

// Throws Error{invalid_transition} naming both states when `from -> to` is not allowed.
void check_transition(TaskStatus from, TaskStatus to);

}  // namespace leasefs::gate

// The one exception type of the control plane: a stable code a program can match
// and a message a person can act on. The server turns it into {"ok":false,...}.
#pragma once

#include <stdexcept>
#include <string>

namespace leasefs::gate {

class Error : public std::runtime_error {
 public:
  Error(std::string code, const std::string& message)
      : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const noexcept { return code_; }

 private:
  std::string code_;
};

// Stable codes; scripts depend on them.
namespace code {
inline constexpr const char* kInvalidTransition = "invalid_transition";
inline constexpr const char* kStateCorrupt = "state_corrupt";
inline constexpr const char* kRootLocked = "root_locked";
inline constexpr const char* kNoTask = "no_task";
inline constexpr const char* kTaskExists = "task_exists";
inline constexpr const char* kNotInProgress = "not_in_progress";
inline constexpr const char* kCheckpointWriteFailed = "checkpoint_write_failed";
inline constexpr const char* kNoPendingCheckpoint = "no_pending_checkpoint";
inline constexpr const char* kPendingCheckpoint = "pending_checkpoint";
inline constexpr const char* kNotFound = "not_found";
inline constexpr const char* kInvalidArgument = "invalid_argument";
inline constexpr const char* kForbidden = "forbidden";
inline constexpr const char* kStaleLease = "stale_lease";
inline constexpr const char* kStaleRequest = "stale_request";
inline constexpr const char* kAlreadyDecided = "already_decided";
inline constexpr const char* kMemoryError = "memory_error";
inline constexpr const char* kIoError = "io_error";
}  // namespace code

}  // namespace leasefs::gate

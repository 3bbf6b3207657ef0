// The one error model of the project: every refusal or failure a client can see
// is an Errc with a stable wire name (scripts match on it), carried by Error with
// a message a person can act on. The names are mapped in base/error.cpp and
// nowhere else; the server turns an Error into {"ok":false,"error":{...}}.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace leasefs {

enum class Errc {
  // Task and lease rules.
  kInvalidTransition,
  kStateCorrupt,
  kRootLocked,
  kNoTask,
  kTaskExists,
  kNotInProgress,
  kCheckpointWriteFailed,
  kNoPendingCheckpoint,
  kPendingCheckpoint,
  kNotFound,
  kInvalidArgument,
  kForbidden,
  kStaleLease,
  kStaleRequest,
  kAlreadyDecided,
  kForeignMount,
  kMemoryError,
  kIoError,
  // The wire protocol.
  kBadJson,
  kBadRequest,
  kUnknownCommand,
  kLineTooLong,
  kInternal,
  kBusy,
  kIdempotencyConflict,
  kAuditBroken,
  // The journal.
  kUndoConflict,
};

// "invalid_transition", "bad_request", ...
std::string_view wire_name(Errc code) noexcept;
// The inverse, for clients and tests; nullopt for a name this build does not know.
std::optional<Errc> errc_from_wire(std::string_view name) noexcept;

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Errc errc() const noexcept { return code_; }
  std::string_view code() const noexcept { return wire_name(code_); }

 private:
  Errc code_;
};

// A failed system call: kIoError, "<what>: <strerror(err)>".
[[noreturn]] void throw_io_error(const std::string& what, int err);

}  // namespace leasefs

#include "base/error.hpp"

#include <cstring>

#include "base/enum_names.hpp"

namespace leasefs {

namespace {

constexpr base::EnumNames<Errc, 27> kNames{{
    {Errc::kInvalidTransition, "invalid_transition"},
    {Errc::kStateCorrupt, "state_corrupt"},
    {Errc::kRootLocked, "root_locked"},
    {Errc::kNoTask, "no_task"},
    {Errc::kTaskExists, "task_exists"},
    {Errc::kNotInProgress, "not_in_progress"},
    {Errc::kCheckpointWriteFailed, "checkpoint_write_failed"},
    {Errc::kNoPendingCheckpoint, "no_pending_checkpoint"},
    {Errc::kPendingCheckpoint, "pending_checkpoint"},
    {Errc::kNotFound, "not_found"},
    {Errc::kInvalidArgument, "invalid_argument"},
    {Errc::kForbidden, "forbidden"},
    {Errc::kStaleLease, "stale_lease"},
    {Errc::kStaleRequest, "stale_request"},
    {Errc::kAlreadyDecided, "already_decided"},
    {Errc::kForeignMount, "foreign_mount"},
    {Errc::kMemoryError, "memory_error"},
    {Errc::kIoError, "io_error"},
    {Errc::kBadJson, "bad_json"},
    {Errc::kBadRequest, "bad_request"},
    {Errc::kUnknownCommand, "unknown_command"},
    {Errc::kLineTooLong, "line_too_long"},
    {Errc::kInternal, "internal"},
    {Errc::kBusy, "busy"},
    {Errc::kIdempotencyConflict, "idempotency_conflict"},
    {Errc::kAuditBroken, "audit_broken"},
    {Errc::kUndoConflict, "undo_conflict"},
}};

}  // namespace

std::string_view wire_name(Errc code) noexcept {
  return base::enum_name(kNames, code, "internal");
}

std::optional<Errc> errc_from_wire(std::string_view name) noexcept {
  return base::enum_from_name(kNames, name);
}

void throw_io_error(const std::string& what, int err) {
  throw Error(Errc::kIoError, what + ": " + std::strerror(err));
}

}  // namespace leasefs

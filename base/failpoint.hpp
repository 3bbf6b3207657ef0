// Crash windows made testable: LEASEFS_FAILPOINT=<name> makes the process die
// (_exit(86), no cleanup, as a crash would) when it reaches that point.
#pragma once

namespace leasefs::base {

inline constexpr int kFailpointExitCode = 86;

// Named points where the process dies: "checkpoint.after_memory" (memory saved,
// state not written), "state.after_tmp" (temp state file written, not renamed),
// "state_log.torn_write" (half a state record written), "grant.after_ledger"
// (the ledger holds a grant, the state log not yet), "journal.after_blob_write",
// "journal.before_index", "journal.after_index" (a pre-image kept, around its
// index record), "undo.after_journal", "undo.after_one", "undo.after_remove"
// (an undo partly done). Points that fail instead (failpoint_armed):
// "memory.save" (the memory write fails), "audit.lose_batch" (the audit writer
// loses its first batch, as if the append had failed), "state_log.sync" (the
// state log's fdatasync fails).
void failpoint(const char* name) noexcept;
bool failpoint_armed(const char* name) noexcept;

}  // namespace leasefs::base

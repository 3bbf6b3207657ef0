// Crash windows made testable: LEASEFS_FAILPOINT=<name> makes the process die
// (_exit(86), no cleanup, as a crash would) when it reaches that point.
#pragma once

namespace leasefs::base {

inline constexpr int kFailpointExitCode = 86;

// Named points: "checkpoint.after_memory" (memory saved, state not written),
// "state.after_tmp" (temp state file written, not renamed), "memory.save" (the
// memory write fails with an error instead of dying), "audit.lose_batch" (the
// audit writer loses its first batch, as if the append had failed),
// "state_log.torn_write" (half a state record written), "state_log.sync" (the
// state log's fdatasync fails instead of dying).
void failpoint(const char* name) noexcept;
bool failpoint_armed(const char* name) noexcept;

}  // namespace leasefs::base

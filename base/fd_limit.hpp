// The daemon's share of descriptors: it holds many control connections and,
// through the mount, many files, so at start RLIMIT_NOFILE's soft limit goes
// up to the hard one. Where the hard limit is unlimited (which the kernel
// refuses as a soft limit for descriptors) it goes to 65536. Never lowered.
#pragma once

#include <cstddef>

namespace leasefs::base {

// Raises the soft limit and returns the one in force (1024 when unreadable).
size_t raise_fd_limit() noexcept;

// Grows this process's descriptor table to hold at least `slots` descriptors,
// now. The kernel grows it by doubling as descriptors are opened, and in a
// process with threads each growth waits for an RCU grace period, milliseconds,
// paid by whichever call opens the descriptor that does not fit. Grown before
// any thread starts, it waits for nothing; the table never shrinks. Best effort:
// past RLIMIT_NOFILE it leaves the table as it is.
void reserve_fd_table(size_t slots) noexcept;

}  // namespace leasefs::base

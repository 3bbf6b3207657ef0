// The daemon's share of descriptors: it holds many control connections and,
// through the mount, many files, so at start RLIMIT_NOFILE's soft limit goes
// up to the hard one. Where the hard limit is unlimited (which the kernel
// refuses as a soft limit for descriptors) it goes to 65536. Never lowered.
#pragma once

#include <cstddef>

namespace leasefs::base {

// Raises the soft limit and returns the one in force (1024 when unreadable).
size_t raise_fd_limit() noexcept;

}  // namespace leasefs::base

// Whether a caller waiting on a request has been signalled. Over /dev/fuse the
// kernel says so with FUSE_INTERRUPT; libfuse 3.18 does not deliver that for
// requests that came over io_uring (transport.hpp), so the daemon's long waits
// (a lock, an ask) look at the caller themselves: a signal the thread does not
// block is what makes the kernel interrupt a request, and a fatal one (SIGKILL)
// shows there too.
#pragma once

#include <sys/types.h>

namespace leasefs::fuse {

// From /proc/TID/status: a signal pending on thread `tid` (or its process) that
// the thread does not block. False when the thread is gone.
bool signal_pending(pid_t tid);

}  // namespace leasefs::fuse

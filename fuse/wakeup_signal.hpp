// The signal that wakes a thread of the filesystem out of a blocking call:
// SIGUSR1 with a handler that does nothing and no SA_RESTART, so the call
// returns EINTR. The session's loop waits on it (session.cpp), and so do
// workers waiting in flock() for a lock (lock_waits.hpp).
#pragma once

#include <pthread.h>
#include <signal.h>

namespace leasefs::fuse {

inline constexpr int kWakeupSignal = SIGUSR1;

// Installs the handler, once per process.
void install_wakeup_handler();

}  // namespace leasefs::fuse

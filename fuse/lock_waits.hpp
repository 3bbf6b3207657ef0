// BSD locks (flock) taken through the mount are taken on the backing descriptor,
// so a process waiting for a lock another one holds has a worker thread of the
// daemon waiting in flock() underneath. Such a wait must end when the waiting
// process is interrupted (the kernel sends FUSE_INTERRUPT: `flock -w`, Ctrl-C)
// and when the daemon stops; otherwise the session's loop cannot join the worker
// and the daemon outlives its mount for as long as the lock is held, keeping the
// root's lock so that no new daemon may serve it.
//
// The waiting worker is woken with kWakeupSignal (wakeup_signal.hpp); whoever
// ends a wait sends it again until the worker has left flock(), so a signal
// that lands just before the call is never lost.
#pragma once

#include <fuse_lowlevel.h>
#include <pthread.h>

#include <condition_variable>
#include <list>
#include <mutex>

namespace leasefs::fuse {

class LockWaits {
 public:
  LockWaits() = default;
  LockWaits(const LockWaits&) = delete;
  LockWaits& operator=(const LockWaits&) = delete;

  // flock(fd, op) on behalf of `req`: 0 or -errno; -EINTR when the request is
  // interrupted, -ENOTCONN once stop() was called.
  int flock(fuse_req_t req, int fd, int op);
  // Ends every wait, now and later. Returns once no worker is left in flock().
  void stop();

 private:
  struct Waiter {
    LockWaits* owner;
    pthread_t thread;
    int ended = 0;  // guarded by mu_: -EINTR or -ENOTCONN once the wait must end
  };
  static void on_interrupt(fuse_req_t req, void* data);
  // Sets `why` on `w` and wakes it until it has left; with mu_ held in `lock`.
  void end(std::unique_lock<std::mutex>& lock, Waiter& w, int why);

  std::mutex mu_;
  std::condition_variable left_;
  std::list<Waiter*> waiters_;  // guarded by mu_: those in (or about to enter) flock()
  bool stopping_ = false;       // guarded by mu_
};

}  // namespace leasefs::fuse

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
//
// Over io_uring (transport.hpp) the thread that runs a request serves a whole
// CPU's queue, and no FUSE_INTERRUPT reaches a request's callback
// (TransportInUse::interrupts_reach). So a lock that is not free at once is
// waited for by one polling thread
// instead (wait_elsewhere), which replies when the lock is had, when the
// caller has a signal pending that it does not block (read from
// /proc/PID/status: the interrupt the kernel would have sent), or on stop().
#pragma once

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <sys/types.h>

#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

namespace leasefs::fuse {

class LockWaits {
 public:
  LockWaits() = default;
  LockWaits(const LockWaits&) = delete;
  LockWaits& operator=(const LockWaits&) = delete;

  // flock(fd, op) on behalf of `req`: 0 or -errno; -EINTR when the request is
  // interrupted, -ENOTCONN once stop() was called.
  int flock(fuse_req_t req, int fd, int op);
  // For a request no interrupt reaches: takes the lock at once if it is free and returns
  // false (the caller replies with `*res`); else the request waits on the
  // polling thread, which replies, and true.
  bool wait_elsewhere(fuse_req_t req, int fd, int op, int* res);
  // Ends every wait, now and later. Returns once no worker is left in flock()
  // and the polling thread has answered its waits.
  void stop();
  ~LockWaits();

 private:
  struct Polled {
    fuse_req_t req;
    int fd;
    int op;
    pid_t caller;
  };
  void poll_waits() noexcept;

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
  std::list<Polled> polled_;    // guarded by mu_: requests waiting for a lock, polled
  std::condition_variable polled_added_;
  std::thread poller_;  // started with the first polled wait
};

}  // namespace leasefs::fuse

#include "fuse/lock_waits.hpp"

#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "fuse/caller_signals.hpp"
#include "fuse/reply.hpp"
#include "fuse/wakeup_signal.hpp"

namespace leasefs::fuse {

int LockWaits::flock(fuse_req_t req, int fd, int op) {
  if (op & LOCK_NB) return ::flock(fd, op) == 0 ? 0 : -errno;
  install_wakeup_handler();
  Waiter w{this, ::pthread_self()};
  {
    std::lock_guard lock(mu_);
    if (stopping_) return -ENOTCONN;
    waiters_.push_back(&w);
  }
  // Calls on_interrupt at once when the request was interrupted already.
  fuse_req_interrupt_func(req, on_interrupt, &w);
  int res = 0;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (w.ended != 0) {
        res = w.ended;
        break;
      }
    }
    if (::flock(fd, op) == 0) break;
    if (errno != EINTR) {
      res = -errno;
      break;
    }
  }
  {
    std::lock_guard lock(mu_);
    waiters_.remove(&w);
  }
  left_.notify_all();
  // Waits for an on_interrupt still running (libfuse holds the request's lock
  // around it), so `w` outlives it.
  fuse_req_interrupt_func(req, nullptr, nullptr);
  return res;
}

void LockWaits::on_interrupt(fuse_req_t /*req*/, void* data) {
  Waiter& w = *static_cast<Waiter*>(data);
  std::unique_lock lock(w.owner->mu_);
  w.owner->end(lock, w, -EINTR);
}

void LockWaits::end(std::unique_lock<std::mutex>& lock, Waiter& w, int why) {
  if (w.ended == 0) w.ended = why;
  if (::pthread_equal(w.thread, ::pthread_self())) return;  // not in flock() yet
  Waiter* const waiter = &w;                                // gone once it has left the list
  while (std::find(waiters_.begin(), waiters_.end(), waiter) != waiters_.end()) {
    ::pthread_kill(waiter->thread, kWakeupSignal);
    left_.wait_for(lock, std::chrono::milliseconds(1));
  }
}

void LockWaits::stop() {
  std::unique_lock lock(mu_);
  stopping_ = true;
  while (!waiters_.empty()) end(lock, *waiters_.front(), -ENOTCONN);
  polled_added_.notify_all();
  lock.unlock();
  if (poller_.joinable()) poller_.join();
}

LockWaits::~LockWaits() {
  stop();
}

bool LockWaits::wait_elsewhere(fuse_req_t req, int fd, int op, int* res) {
  if (op & LOCK_NB) {
    *res = ::flock(fd, op) == 0 ? 0 : -errno;
    return false;
  }
  if (::flock(fd, op | LOCK_NB) == 0) {
    *res = 0;
    return false;
  }
  if (errno != EWOULDBLOCK) {
    *res = -errno;
    return false;
  }
  std::lock_guard lock(mu_);
  if (stopping_) {
    *res = -ENOTCONN;
    return false;
  }
  polled_.push_back({req, fd, op, fuse_req_ctx(req)->pid});
  if (!poller_.joinable()) poller_ = std::thread([this] { poll_waits(); });
  polled_added_.notify_all();
  return true;
}

void LockWaits::poll_waits() noexcept {
  std::unique_lock lock(mu_);
  while (true) {
    polled_added_.wait(lock, [&] { return stopping_ || !polled_.empty(); });
    for (auto it = polled_.begin(); it != polled_.end();) {
      int res = 1;  // still waiting
      if (stopping_) {
        res = -ENOTCONN;
      } else if (::flock(it->fd, it->op | LOCK_NB) == 0) {
        res = 0;
      } else if (errno != EWOULDBLOCK) {
        res = -errno;
      } else if (signal_pending(it->caller)) {
        res = -EINTR;
      }
      if (res == 1) {
        ++it;
        continue;
      }
      reply_status(it->req, res);
      it = polled_.erase(it);
    }
    if (stopping_ && polled_.empty()) return;
    // A lock let go is seen within a few milliseconds; nothing wakes a poll.
    polled_added_.wait_for(lock, std::chrono::milliseconds(5));
  }
}

}  // namespace leasefs::fuse

// Work that may run on a thread which must never wait, such as the control
// socket's event loop answering `status` itself instead of handing it to a
// worker. Inside a NonBlockingScope, every lock taken through
// lock_or_would_block() is only tried: when it is held, WouldBlock is thrown
// before anything is changed, and the caller hands the work to a thread that
// may wait. Outside a scope, the same calls simply lock.
#pragma once

#include <exception>
#include <mutex>

namespace leasefs::base {

struct WouldBlock : std::exception {
  const char* what() const noexcept override { return "the work would wait; hand it over"; }
};

namespace detail {
inline thread_local bool tls_non_blocking = false;
}

class NonBlockingScope {
 public:
  NonBlockingScope() noexcept : outer_(detail::tls_non_blocking) {
    detail::tls_non_blocking = true;
  }
  ~NonBlockingScope() { detail::tls_non_blocking = outer_; }
  NonBlockingScope(const NonBlockingScope&) = delete;
  NonBlockingScope& operator=(const NonBlockingScope&) = delete;

 private:
  bool outer_;
};

// Throws WouldBlock inside a NonBlockingScope: for work that can wait on
// something other than a lock (a scan of /proc, a disk read).
inline void would_block_here() {
  if (detail::tls_non_blocking) throw WouldBlock();
}

template <class Mutex>
std::unique_lock<Mutex> lock_or_would_block(Mutex& mu) {
  if (!detail::tls_non_blocking) return std::unique_lock<Mutex>(mu);
  std::unique_lock<Mutex> lock(mu, std::try_to_lock);
  if (!lock.owns_lock()) throw WouldBlock();
  return lock;
}

}  // namespace leasefs::base

// How FUSE requests reach the daemon. Over /dev/fuse, worker threads read one
// request each and the kernel must wake one to serve it. Over io_uring (Linux
// 6.14+, libfuse 3.18+), one thread per CPU serves that CPU's queue of ring
// entries, each holding one request until it is answered: a request no longer
// waits for a woken thread to be scheduled, which is most of a metadata
// operation's cost on a busy machine.
//
// The kernel offers io_uring only while the fuse module's host-wide parameter
// /sys/module/fuse/parameters/enable_uring is Y. The daemon reads it and never
// sets it (the systemd unit may, in ExecStartPre); with N, or a libfuse without
// io_uring, requests come over /dev/fuse.
#pragma once

#include <fuse_lowlevel.h>

#include <atomic>
#include <cstddef>

#include "fuse/libfuse_features.hpp"

namespace leasefs::fuse {

enum class Transport { kDevFuse, kIoUring };

const char* transport_name(Transport t) noexcept;  // "dev_fuse", "io_uring"

// The kernel's enable_uring parameter, read now (false when unreadable).
bool kernel_offers_io_uring() noexcept;
inline constexpr bool kBuiltWithIoUring = LEASEFS_FUSE_IO_URING != 0;

// Ring entries per CPU queue. A request parked for a person (ask mode,
// parked_requests.hpp) keeps its entry until answered, and any one queue may
// hold them all, so at most kRingMaxParked requests park on this transport
// (4,096 over /dev/fuse): every queue keeps kRingEntriesNeverParked entries
// serving. A burst of one operation (200 opens of one file waiting on one ask)
// still parks whole. Each entry holds a buffer of max_write (1 MiB) that is
// touched only as far as requests fill it (DESIGN.md, Speed, has the RSS).
inline constexpr size_t kRingMaxParked = 256;
inline constexpr unsigned kRingEntriesNeverParked = 32;
inline constexpr unsigned kRingQueueDepth = kRingMaxParked + kRingEntriesNeverParked;

// Which transport is serving: /dev/fuse until a request is seen on a ring.
class TransportInUse {
 public:
  Transport get() const noexcept {
    return ring_.load(std::memory_order_relaxed) ? Transport::kIoUring : Transport::kDevFuse;
  }
  // Whether the kernel's FUSE_INTERRUPT reaches `req`'s interrupt callback
  // (fuse_req_interrupt_func). libfuse 3.18 matches an interrupt only with a
  // request read from /dev/fuse: one for a ring request stays queued in the
  // session forever, 128 bytes each. So where a ring may serve, op_init asks the
  // kernel for no interrupts at all (conn->no_interrupt), and a request that
  // waits (a lock, an ask) looks at its caller's pending signals itself
  // (caller_signals.hpp), whichever way it came.
  bool interrupts_reach(fuse_req_t req) const noexcept {
#if LEASEFS_FUSE_IO_URING
    if (fuse_req_is_uring(req)) return false;
#else
    (void)req;
#endif
    return !interrupts_off_.load(std::memory_order_relaxed);
  }
  void set_interrupts_off() noexcept {
    interrupts_off_.store(true, std::memory_order_relaxed);
  }

  // First on each serving thread: a ring thread is noted, and made safe to
  // end (see transport.cpp). Cheap after the first call on a thread.
  void on_request(fuse_req_t req) noexcept {
    thread_local bool seen = false;
    if (!seen) {
      seen = true;
      first_on_thread(req);
    }
  }

 private:
  void first_on_thread(fuse_req_t req) noexcept;
  std::atomic<bool> ring_{false};
  std::atomic<bool> interrupts_off_{false};
};

}  // namespace leasefs::fuse

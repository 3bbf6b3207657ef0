// Room for the control plane on a full disk. A ballast file (`.longrun/reserve`)
// holds allocated space while the disk has room. When a write meets ENOSPC on
// a disk with less than one and a half ballasts free (or free space falls under a
// quarter of the ballast), the ballast is emptied at once: its space is left for what the daemon
// must still write (the ledger, the audit, memory, the state log, status.md), and the disk counts
// as full, so the file plane answers ENOSPC to whatever would take space (it must not eat the
// reserve). Once free space is back to one and a half ballasts, the ballast is allocated again
// (leaving half of one free, above the quarter that would give it up again) and the disk is no
// longer full: what a person frees (`leasectl journal prune`, a file removed) opens writes again.
//
// One thread checks once a second, and at once after an ENOSPC; each time it
// first runs the sweep it was given (the file plane lets go of deleted files it
// still held, whose blocks would otherwise stay allocated).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "base/unique_fd.hpp"
#include "base/worker_thread.hpp"

namespace leasefs::base {

class DiskReserve {
 public:
  static constexpr uint64_t kMaxBytes = uint64_t{16} << 20;

  // The ballast is `name` in directory `dir_fd`, of min(kMaxBytes, the file
  // system's size / 8). Allocated here when there is room; otherwise the disk
  // starts full.
  DiskReserve(int dir_fd, const std::string& name);
  DiskReserve(const DiskReserve&) = delete;
  DiskReserve& operator=(const DiskReserve&) = delete;

  // Starts the checking thread; `sweep` runs on it before every check, and
  // `changed` after a round in which full() changed.
  void start(std::function<void()> sweep, std::function<void()> changed);
  void stop();

  // A write met ENOSPC or EDQUOT: unless the disk still has hold_at() bytes
  // free, the ballast goes now; the sweep runs at once either way.
  void no_space() noexcept;
  // The ballast is empty: what would take space through the mount is refused.
  bool full() const noexcept { return full_.load(std::memory_order_acquire); }

  struct Status {
    bool full = false;
    uint64_t reserve_bytes = 0;  // the ballast's size when held
    uint64_t free_bytes = 0;     // free on the file system, as of the last check
    uint64_t given_up = 0;       // times the ballast was emptied since the start

    bool operator==(const Status&) const = default;
  };
  Status status() const noexcept;

 private:
  void run();
  // With mu_ held.
  void release_locked() noexcept;
  bool allocate_locked() noexcept;
  uint64_t free_now() const noexcept;
  // Free bytes with which the ballast is held: one and a half of it.
  uint64_t hold_at() const noexcept { return size_ + size_ / 2; }

  UniqueFd fd_;
  uint64_t size_ = 0;
  std::atomic<bool> full_{true};
  std::atomic<uint64_t> free_{0};
  std::atomic<uint64_t> given_up_{0};
  std::function<void()> sweep_;
  std::function<void()> changed_;
  std::mutex mu_;
  bool wake_ = false;         // guarded by mu_
  WorkerThread worker_{mu_};  // last: stopped before the rest goes
};

}  // namespace leasefs::base

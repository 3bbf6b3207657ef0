// The daemon's descriptor budget. At start RLIMIT_NOFILE's soft limit is raised
// (base/fd_limit.hpp); a reserve is kept back from the file plane so that the
// control plane (socket, SQLite, state files, revocation) always gets the few
// descriptors it needs. Everything the file plane keeps open - inode fds in the
// cache, inodes without file handles, open files and directories - is counted
// here and refused with EMFILE past `ceiling()`; that one operation fails and
// everything else goes on.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

namespace leasefs::fuse {

class FdBudget {
 public:
  // Descriptors kept back for the control plane and for transient file-plane
  // use (a lookup's fd before it is cached, one per worker thread at most).
  static constexpr size_t kReserve = 256;

  explicit FdBudget(size_t limit) noexcept;

  // One descriptor for the file plane, or false when it would pass the ceiling.
  bool try_take() noexcept;
  // Like try_take, but first asks the reclaimer (the inode cache) to close
  // descriptors it can do without: open files come before cached inode fds.
  bool take_reclaiming() noexcept;
  // `fn` closes one descriptor and returns true, or returns false when it has
  // none to give; null removes it. It must not call take_reclaiming.
  void set_reclaimer(std::function<bool()> fn);
  void give_back() noexcept;
  // An operation failed with EMFILE for lack of a descriptor (for status).
  void note_refused() noexcept { refused_.fetch_add(1, std::memory_order_relaxed); }

  size_t limit() const noexcept { return limit_; }
  size_t ceiling() const noexcept { return ceiling_; }
  size_t in_use() const noexcept { return in_use_.load(std::memory_order_relaxed); }
  // Operations refused for lack of a descriptor since start.
  uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

 private:
  size_t limit_;
  size_t ceiling_;
  std::atomic<size_t> in_use_{0};
  std::atomic<uint64_t> refused_{0};
  std::mutex reclaim_mu_;
  std::function<bool()> reclaimer_;  // guarded by reclaim_mu_
};

// The process-wide budget (the limit is read once, at first use).
FdBudget& fd_budget() noexcept;

// One descriptor of the process-wide budget held by an open file or directory
// handle, given back when the handle goes.
class BudgetSlot {
 public:
  BudgetSlot() = default;
  BudgetSlot(const BudgetSlot&) = delete;
  BudgetSlot& operator=(const BudgetSlot&) = delete;
  ~BudgetSlot() {
    if (held_) fd_budget().give_back();
  }
  // False (and counted as a refusal) when the file plane's ceiling is reached:
  // the operation then fails with EMFILE.
  bool take() noexcept {
    if (!held_ && !fd_budget().take_reclaiming()) {
      fd_budget().note_refused();
      return false;
    }
    held_ = true;
    return true;
  }

 private:
  bool held_ = false;
};

// Descriptors this process has open now (entries of /proc/self/fd).
size_t count_open_fds() noexcept;

}  // namespace leasefs::fuse

// How an inode reaches its backing file without pinning a descriptor.
//
// Where the backing file system has file handles (name_to_handle_at: ext4, xfs,
// btrfs, tmpfs, ...), an inode borrows an O_PATH fd from a bounded LRU cache;
// the fd's handle is taken when it is evicted, and the fd reopened with
// open_by_handle_at when needed again. Where
// it has none (or the file lies on another file system than the root), the
// inode keeps its fd for life, counted against the same budget. A walk over a
// million files therefore holds at most the cache's capacity in descriptors.
//
// `fd.get()` returns a PinnedFd: while it lives the descriptor cannot be evicted
// and closed under the caller (a closed number could be reused by another file).
// Used inside one expression - `::openat(dir.fd.get(), name, ...)` - the pin
// lasts for that call. When no descriptor can be had, get() throws
// std::system_error (EMFILE, or ESTALE for a file that is gone), which the
// operation's guard turns into that errno for this one request.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "base/unique_fd.hpp"
#include "fuse/fd_budget.hpp"

namespace leasefs::fuse {

class FdCache;
class InodeFd;

class PinnedFd {
 public:
  PinnedFd(int fd, const InodeFd* owner) noexcept : fd_(fd), owner_(owner) {}
  PinnedFd(PinnedFd&& o) noexcept : fd_(o.fd_), owner_(o.owner_) { o.owner_ = nullptr; }
  PinnedFd(const PinnedFd&) = delete;
  PinnedFd& operator=(const PinnedFd&) = delete;
  PinnedFd& operator=(PinnedFd&&) = delete;
  ~PinnedFd();

  int get() const noexcept { return fd_; }
  operator int() const noexcept { return fd_; }  // NOLINT: used as the fd in calls

 private:
  int fd_;
  const InodeFd* owner_;  // null: nothing to unpin
};

class InodeFd {
 public:
  // `fd` is an O_PATH descriptor just opened on the file. With a cache that
  // can use handles for it (`cache->handles_for(dev)`), the fd goes into the
  // cache, and the file's handle is taken only when the fd is first evicted (a
  // file the cache keeps costs no handle); otherwise the fd is kept for life.
  // Throws std::system_error(EMFILE) when an fd must be kept and the budget is
  // spent.
  InodeFd(base::UniqueFd fd, dev_t dev, FdCache* cache);
  ~InodeFd();
  InodeFd(const InodeFd&) = delete;
  InodeFd& operator=(const InodeFd&) = delete;

  PinnedFd get() const;

 private:
  friend class FdCache;
  friend class PinnedFd;
  FdCache* cache_;  // null: the fd is kept for life
  // Guarded by cache_->mu_ when cache_ is set. `handle_` (struct file_handle,
  // raw) is taken from the open fd before its first eviction.
  mutable std::string handle_;
  mutable bool kept_ = false;  // no handle could be had: never evicted
  mutable int fd_ = -1;
  mutable unsigned pins_ = 0;
  mutable bool in_lru_ = false;
  mutable std::list<const InodeFd*>::iterator lru_pos_;
};

class FdCache {
 public:
  static constexpr size_t kDefaultCapacity = 8192;

  // `root_fd`: the root directory (O_PATH is fine); open_by_handle_at needs a
  // descriptor on the file system that is not O_PATH, opened from it here.
  // Files on other file systems keep their fds. `capacity`: cached fds at most
  // (pinned ones may pass it for the length of one call).
  FdCache(int root_fd, dev_t dev, FdBudget& budget, size_t capacity = kDefaultCapacity);
  ~FdCache();

  struct Stats {
    size_t open = 0;      // descriptors open in the cache now
    size_t capacity = 0;  // the most it keeps
    size_t kept = 0;      // inodes keeping their fd for life (no handle)
    uint64_t hits = 0, misses = 0, evictions = 0;
  };
  Stats stats() const;
  // Whether inodes on `dev` can be kept by handle.
  bool handles_for(dev_t dev) const noexcept {
    return dev == dev_ && handles_ok_.load(std::memory_order_relaxed);
  }
  // Whether `fd` (just opened, same st_dev and st_ino as `inode`) is the file
  // `inode` stands for. While `inode` has its fd open, its inode number cannot
  // have been reused, so yes; once evicted, its handle (which carries the
  // generation) must match `fd`'s. On a match `fd` becomes `inode`'s cached fd.
  bool same_file(const InodeFd& inode, base::UniqueFd& fd);
  FdBudget& budget() noexcept { return budget_; }

 private:
  friend class InodeFd;
  friend class PinnedFd;
  PinnedFd pin(const InodeFd& inode);
  void unpin(const InodeFd& inode) noexcept;
  // With mu_ held: closes least recently used unpinned fds until `open_ <= target`.
  // Returns false when none could be closed.
  bool evict_locked(size_t target) noexcept;
  // With mu_ held: one budget slot, evicting if the budget is spent.
  bool take_slot_locked() noexcept;
  void adopt(const InodeFd& inode, base::UniqueFd fd);
  void keep(base::UniqueFd& fd);
  void forget(const InodeFd& inode) noexcept;

  const base::UniqueFd mount_fd_;
  const dev_t dev_;
  FdBudget& budget_;
  const size_t capacity_;
  std::atomic<bool> handles_ok_{true};
  mutable std::mutex mu_;
  std::list<const InodeFd*> lru_;  // unpinned entries with an open fd, oldest first
  size_t open_ = 0;
  size_t kept_ = 0;
  uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

}  // namespace leasefs::fuse

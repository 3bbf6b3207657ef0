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
//
// Size matters here: there is one InodeFd per inode the kernel holds, a million
// after a walk over a large tree. So an InodeFd is 24 bytes: the descriptor or
// cache slot, the cache as a small number (see FdCache's registry), and the
// handle inline when it fits (ext4, xfs, tmpfs); per-descriptor state (pins,
// LRU links) lives in the cache's slots, of which there are at most about its
// capacity.
#pragma once

#include <fcntl.h>  // struct file_handle
#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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
  enum Mode : uint8_t {
    kOwn,     // no cache: fd_or_slot_ is the fd, kept for life
    kKept,    // the cache counts it, but it has no handle: fd_or_slot_ is the fd, for life
    kCached,  // fd_or_slot_ is the cache slot holding the open fd, or -1 (evicted)
  };
  static constexpr size_t kInlineHandle = 12;  // ext4 8, tmpfs and 64-bit xfs 12 bytes
  static constexpr uint8_t kNoHandle = 0;
  static constexpr uint8_t kHeapHandle = 0xff;  // handle_ holds a pointer to a file_handle

  FdCache* cache() const noexcept;
  // With the cache's lock held (or before the inode is shared).
  bool has_handle() const noexcept { return handle_len_ != kNoHandle; }
  void set_handle(const struct file_handle& fh) const;
  // The handle as a file_handle in `buf` (at least sizeof(file_handle) + MAX_HANDLE_SZ).
  void copy_handle(void* buf) const noexcept;
  bool same_handle(const struct file_handle& fh) const noexcept;

  // Guarded by the cache's mutex when mode_ is not kOwn.
  mutable int32_t fd_or_slot_ = -1;
  uint16_t cache_id_ = 0;  // FdCache registry number; 0: none (mode_ kOwn). Fixed.
  mutable Mode mode_ = kOwn;
  // kNoHandle, kHeapHandle, or 1 + the number of inline handle bytes.
  mutable uint8_t handle_len_ = kNoHandle;
  mutable uint8_t handle_type_ = 0;  // inline handles only
  mutable unsigned char handle_[kInlineHandle] = {};
};
static_assert(sizeof(InodeFd) <= 24, "an InodeFd per inode: keep it small");

class FdCache {
 public:
  static constexpr size_t kDefaultCapacity = 8192;

  // `root_fd`: the root directory (O_PATH is fine); open_by_handle_at needs a
  // descriptor on the file system that is not O_PATH, opened from it here.
  // Files on other file systems keep their fds. `capacity`: cached fds at most
  // (pinned ones may pass it for the length of one call).
  // Throws std::runtime_error when too many caches live in one process.
  FdCache(int root_fd, dev_t dev, FdBudget& budget, size_t capacity = kDefaultCapacity);
  ~FdCache();
  FdCache(const FdCache&) = delete;
  FdCache& operator=(const FdCache&) = delete;

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
  // Closes the cached fds of files with no name left (removed underneath while
  // the kernel still holds their inodes): an fd would keep their blocks
  // allocated. Each keeps its handle, so it is reopened while it still exists.
  // Fds in use and fds kept for life stay. Returns how many were closed.
  size_t release_deleted() noexcept;

 private:
  friend class InodeFd;
  friend class PinnedFd;
  static constexpr uint32_t kNil = UINT32_MAX;
  // One open descriptor of the cache. LRU links are slot numbers.
  struct Slot {
    const InodeFd* owner = nullptr;
    int fd = -1;
    uint32_t pins = 0;
    uint32_t prev = kNil, next = kNil;
    bool in_lru = false;
  };

  // Descriptors let go of under mu_, closed (and given back to the budget) once
  // it is released: the last close of a deleted file frees its blocks, which
  // must not hold up every operation waiting for the lock. Declared before the
  // lock's guard, so that it closes after the unlock.
  class Closing {
   public:
    explicit Closing(FdBudget& budget) noexcept : budget_(budget) {}
    ~Closing();
    Closing(const Closing&) = delete;
    Closing& operator=(const Closing&) = delete;
    // Queues `fd`; when the queue is full it is closed at once, lock or not.
    void add(int fd) noexcept;
    static constexpr size_t kCapacity = 64;

   private:
    FdBudget& budget_;
    std::array<int, kCapacity> fds_;
    size_t n_ = 0;
  };

  static FdCache* registered(uint16_t id) noexcept;
  PinnedFd pin(const InodeFd& inode);
  void unpin(const InodeFd& inode) noexcept;
  // With mu_ held: lets go of least recently used unpinned fds until
  // `open_ <= target`. Returns false when none could be let go of.
  bool evict_locked(size_t target, Closing& closing) noexcept;
  // With mu_ held: lets go of unpinned slot `s` (its handle kept); false when the
  // inode has no handle and keeps its fd instead.
  bool evict_slot_locked(uint32_t s, Closing& closing) noexcept;
  // With mu_ held: one budget slot, evicting if the budget is spent.
  bool take_slot_locked(Closing& closing) noexcept;
  // With mu_ held, a budget slot taken: `fd` becomes `inode`'s, at the LRU's end.
  void attach_locked(const InodeFd& inode, int fd);
  void lru_push_locked(uint32_t s) noexcept;
  void lru_unlink_locked(uint32_t s) noexcept;
  void adopt(const InodeFd& inode, base::UniqueFd fd);
  void keep(base::UniqueFd& fd);
  void forget(const InodeFd& inode) noexcept;

  const base::UniqueFd mount_fd_;
  const dev_t dev_;
  FdBudget& budget_;
  const size_t capacity_;
  uint16_t id_ = 0;
  std::atomic<bool> handles_ok_{true};
  mutable std::mutex mu_;
  std::vector<Slot> slots_;     // guarded by mu_
  std::vector<uint32_t> free_;  // unused slot numbers; guarded by mu_
  uint32_t lru_head_ = kNil;    // oldest unpinned open slot; guarded by mu_
  uint32_t lru_tail_ = kNil;
  size_t open_ = 0;
  size_t kept_ = 0;
  uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

}  // namespace leasefs::fuse

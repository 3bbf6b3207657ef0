#include "fuse/inode_fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "base/open_by_handle.hpp"

namespace leasefs::fuse {

namespace {

[[noreturn]] void throw_errno(int err, const char* what) {
  throw std::system_error(err, std::generic_category(), what);
}

struct HandleBuf {
  struct file_handle fh;
  unsigned char bytes[MAX_HANDLE_SZ];
};

// The handle of the file open on `fd` into `buf`; false (errno set) if none.
bool handle_of_fd(int fd, HandleBuf& buf) {
  buf.fh.handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  return ::name_to_handle_at(fd, "", &buf.fh, &mount_id, AT_EMPTY_PATH) == 0;
}

// Caches by number, so that an InodeFd names its cache in two bytes. A cache
// outlives its inodes, so a number read by an inode always names a live cache.
constexpr size_t kMaxCaches = 4096;
std::atomic<FdCache*> g_caches[kMaxCaches];
std::mutex g_caches_mu;

}  // namespace

PinnedFd::~PinnedFd() {
  if (owner_) owner_->cache()->unpin(*owner_);
}

FdCache* InodeFd::cache() const noexcept {
  return FdCache::registered(cache_id_);
}

InodeFd::InodeFd(base::UniqueFd fd, dev_t dev, FdCache* cache) {
  if (cache) cache_id_ = cache->id_;
  if (cache && cache->handles_for(dev)) {
    mode_ = kCached;
    cache->adopt(*this, std::move(fd));
    return;
  }
  if (cache) {
    cache->keep(fd);
    mode_ = kKept;
  }
  fd_or_slot_ = fd.release();
}

InodeFd::~InodeFd() {
  if (cache_id_ == 0) {  // kOwn
    if (fd_or_slot_ >= 0) ::close(fd_or_slot_);
  } else {
    cache()->forget(*this);
  }
  if (handle_len_ == kHeapHandle) {
    void* p = nullptr;
    std::memcpy(&p, handle_, sizeof p);
    std::free(p);
  }
}

PinnedFd InodeFd::get() const {
  // cache_id_ never changes, mode_ may (kCached to kKept, under the cache's lock):
  // without a cache the fd is fixed for life and needs no lock.
  if (cache_id_ == 0) return PinnedFd(fd_or_slot_, nullptr);
  return cache()->pin(*this);
}

void InodeFd::set_handle(const struct file_handle& fh) const {
  if (fh.handle_bytes <= kInlineHandle && fh.handle_type >= 0 && fh.handle_type <= 0xff) {
    std::memcpy(handle_, fh.f_handle, fh.handle_bytes);
    handle_type_ = static_cast<uint8_t>(fh.handle_type);
    handle_len_ = static_cast<uint8_t>(fh.handle_bytes + 1);
    return;
  }
  const size_t size = sizeof fh + fh.handle_bytes;
  void* p = std::malloc(size);
  if (!p) throw std::bad_alloc();
  std::memcpy(p, &fh, size);
  std::memcpy(handle_, &p, sizeof p);
  handle_len_ = kHeapHandle;
}

void InodeFd::copy_handle(void* buf) const noexcept {
  auto* fh = static_cast<struct file_handle*>(buf);
  if (handle_len_ == kHeapHandle) {
    const struct file_handle* p = nullptr;
    std::memcpy(&p, handle_, sizeof p);
    std::memcpy(buf, p, sizeof *p + p->handle_bytes);
    return;
  }
  fh->handle_bytes = handle_len_ - 1u;
  fh->handle_type = handle_type_;
  std::memcpy(fh->f_handle, handle_, fh->handle_bytes);
}

bool InodeFd::same_handle(const struct file_handle& fh) const noexcept {
  if (!has_handle()) return false;
  HandleBuf mine{};
  copy_handle(&mine);
  return mine.fh.handle_bytes == fh.handle_bytes && mine.fh.handle_type == fh.handle_type &&
         std::memcmp(mine.fh.f_handle, fh.f_handle, fh.handle_bytes) == 0;
}

FdCache* FdCache::registered(uint16_t id) noexcept {
  return g_caches[id].load(std::memory_order_acquire);
}

FdCache::FdCache(int root_fd, dev_t dev, FdBudget& budget, size_t capacity)
    : mount_fd_(::openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)),
      dev_(dev),
      budget_(budget),
      capacity_(capacity > 0 ? capacity : 1) {
  {
    std::lock_guard lock(g_caches_mu);
    for (size_t i = 1; i < kMaxCaches && id_ == 0; ++i) {
      if (!g_caches[i].load(std::memory_order_relaxed)) {
        id_ = static_cast<uint16_t>(i);
        g_caches[i].store(this, std::memory_order_release);
      }
    }
  }
  if (id_ == 0) throw std::runtime_error("too many file systems served by one process");
  if (!mount_fd_) handles_ok_.store(false);  // every inode keeps its fd then
  budget_.set_reclaimer([this] {
    Closing closing(budget_);
    std::lock_guard lock(mu_);
    return evict_locked(open_ > 0 ? open_ - 1 : 0, closing);
  });
}

FdCache::~FdCache() {
  budget_.set_reclaimer(nullptr);
  {
    Closing closing(budget_);
    std::lock_guard lock(mu_);
    evict_locked(0, closing);
  }
  std::lock_guard lock(g_caches_mu);
  g_caches[id_].store(nullptr, std::memory_order_release);
}

void FdCache::lru_push_locked(uint32_t s) noexcept {
  Slot& slot = slots_[s];
  slot.prev = lru_tail_;
  slot.next = kNil;
  if (lru_tail_ != kNil) {
    slots_[lru_tail_].next = s;
  } else {
    lru_head_ = s;
  }
  lru_tail_ = s;
  slot.in_lru = true;
}

void FdCache::lru_unlink_locked(uint32_t s) noexcept {
  Slot& slot = slots_[s];
  if (!slot.in_lru) return;
  if (slot.prev != kNil) {
    slots_[slot.prev].next = slot.next;
  } else {
    lru_head_ = slot.next;
  }
  if (slot.next != kNil) {
    slots_[slot.next].prev = slot.prev;
  } else {
    lru_tail_ = slot.prev;
  }
  slot.prev = slot.next = kNil;
  slot.in_lru = false;
}

void FdCache::attach_locked(const InodeFd& inode, int fd) {
  uint32_t s;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    s = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slots_[s] = Slot{&inode, fd, 0, kNil, kNil, false};
  inode.fd_or_slot_ = static_cast<int32_t>(s);
  ++open_;
  lru_push_locked(s);
}

bool FdCache::same_file(const InodeFd& inode, base::UniqueFd& fd) {
  Closing closing(budget_);
  std::lock_guard lock(mu_);
  if (inode.mode_ != InodeFd::kCached || inode.fd_or_slot_ >= 0) return true;
  HandleBuf buf{};
  if (!handle_of_fd(fd.get(), buf) || !inode.same_handle(buf.fh)) return false;
  // Same file, evicted: the fresh fd saves a reopen.
  if (take_slot_locked(closing)) attach_locked(inode, fd.release());
  return true;
}

FdCache::Stats FdCache::stats() const {
  std::lock_guard lock(mu_);
  return Stats{open_, capacity_, kept_, hits_, misses_, evictions_};
}

FdCache::Closing::~Closing() {
  for (size_t i = 0; i < n_; ++i) {
    ::close(fds_[i]);
    budget_.give_back();
  }
}

void FdCache::Closing::add(int fd) noexcept {
  if (n_ < fds_.size()) {
    fds_[n_++] = fd;
    return;
  }
  ::close(fd);
  budget_.give_back();
}

bool FdCache::evict_locked(size_t target, Closing& closing) noexcept {
  bool any = false;
  while (open_ > target && lru_head_ != kNil) {
    if (evict_slot_locked(lru_head_, closing)) any = true;
  }
  return any;
}

bool FdCache::evict_slot_locked(uint32_t s, Closing& closing) noexcept {
  lru_unlink_locked(s);
  const InodeFd* victim = slots_[s].owner;
  const int fd = slots_[s].fd;
  slots_[s] = Slot{};
  free_.push_back(s);
  --open_;
  if (!victim->has_handle()) {
    HandleBuf buf{};
    bool ok = handle_of_fd(fd, buf);
    if (ok) {
      try {
        victim->set_handle(buf.fh);
      } catch (const std::bad_alloc&) {
        ok = false;
        errno = ENOMEM;
      }
    }
    if (!ok) {
      // No handle after all: this inode keeps its fd (counted as kept).
      if (errno == EOPNOTSUPP) handles_ok_.store(false);
      victim->mode_ = InodeFd::kKept;
      victim->fd_or_slot_ = fd;
      ++kept_;
      return false;
    }
  }
  closing.add(fd);
  victim->fd_or_slot_ = -1;
  ++evictions_;
  return true;
}

size_t FdCache::release_deleted() noexcept {
  // In batches, so that the lock every operation takes is never held for long
  // (an fstat of an open fd does not reach the disk; the closes, which free the
  // files' blocks, come after each batch's unlock).
  constexpr size_t kBatch = Closing::kCapacity;
  size_t released = 0;
  for (size_t from = 0;; from += kBatch) {
    Closing closing(budget_);
    std::lock_guard lock(mu_);
    if (from >= slots_.size()) break;
    const size_t to = std::min(slots_.size(), from + kBatch);
    for (size_t s = from; s < to; ++s) {
      const Slot& slot = slots_[s];
      if (!slot.owner || !slot.in_lru) continue;  // free, or pinned by a call in progress
      struct stat st {};
      if (::fstat(slot.fd, &st) != 0 || st.st_nlink != 0) continue;
      if (evict_slot_locked(static_cast<uint32_t>(s), closing)) ++released;
    }
  }
  return released;
}

bool FdCache::take_slot_locked(Closing& closing) noexcept {
  if (open_ >= capacity_) evict_locked(capacity_ - 1, closing);
  while (!budget_.try_take()) {
    if (!evict_locked(open_ > 0 ? open_ - 1 : 0, closing)) return false;
  }
  return true;
}

void FdCache::adopt(const InodeFd& inode, base::UniqueFd fd) {
  Closing closing(budget_);
  std::lock_guard lock(mu_);
  if (!take_slot_locked(closing)) {
    // No room: keep only the handle (the fd closes here), or fail.
    HandleBuf buf{};
    if (!handle_of_fd(fd.get(), buf)) {
      budget_.note_refused();
      throw_errno(EMFILE, "no descriptor left for an inode without a file handle");
    }
    inode.set_handle(buf.fh);
    return;
  }
  attach_locked(inode, fd.release());
}

void FdCache::keep(base::UniqueFd& fd) {
  Closing closing(budget_);
  std::lock_guard lock(mu_);
  if (!take_slot_locked(closing)) {
    budget_.note_refused();
    throw_errno(EMFILE, "no descriptor left for an inode without a file handle");
  }
  ++kept_;
  (void)fd;
}

void FdCache::forget(const InodeFd& inode) noexcept {
  Closing closing(budget_);
  std::lock_guard lock(mu_);
  if (inode.fd_or_slot_ < 0) return;
  if (inode.mode_ == InodeFd::kKept) {
    closing.add(inode.fd_or_slot_);
    --kept_;
  } else {
    const auto s = static_cast<uint32_t>(inode.fd_or_slot_);
    lru_unlink_locked(s);
    closing.add(slots_[s].fd);
    slots_[s] = Slot{};
    free_.push_back(s);
    --open_;
  }
  inode.fd_or_slot_ = -1;
}

PinnedFd FdCache::pin(const InodeFd& inode) {
  HandleBuf handle{};
  {
    std::lock_guard lock(mu_);
    if (inode.mode_ == InodeFd::kKept) {
      ++hits_;
      return PinnedFd(inode.fd_or_slot_, nullptr);  // never closed before the inode goes
    }
    if (inode.fd_or_slot_ >= 0) {
      Slot& slot = slots_[static_cast<uint32_t>(inode.fd_or_slot_)];
      lru_unlink_locked(static_cast<uint32_t>(inode.fd_or_slot_));
      ++slot.pins;
      ++hits_;
      return PinnedFd(slot.fd, &inode);
    }
    ++misses_;
    inode.copy_handle(&handle);
  }
  // Reopen outside the lock (it may read the inode from disk).
  base::UniqueFd fd = base::open_by_handle(mount_fd_.get(), &handle.fh, O_PATH | O_CLOEXEC);
  if (!fd && (errno == EMFILE || errno == ENFILE)) {
    {
      Closing closing(budget_);
      std::lock_guard lock(mu_);
      evict_locked(open_ > 0 ? open_ - 1 : 0, closing);
    }
    fd = base::open_by_handle(mount_fd_.get(), &handle.fh, O_PATH | O_CLOEXEC);
  }
  if (!fd) {
    const int err = errno;
    if (err == EMFILE || err == ENFILE) budget_.note_refused();
    throw_errno(err, "reopen an inode by its handle");
  }
  Closing closing(budget_);
  std::lock_guard lock(mu_);
  if (inode.fd_or_slot_ < 0) {
    if (!take_slot_locked(closing)) {
      budget_.note_refused();
      throw_errno(EMFILE, "no descriptor left for the inode cache");
    }
    attach_locked(inode, fd.release());
  }
  // Else another thread reopened it meanwhile; ours closes.
  const auto s = static_cast<uint32_t>(inode.fd_or_slot_);
  lru_unlink_locked(s);
  ++slots_[s].pins;
  return PinnedFd(slots_[s].fd, &inode);
}

void FdCache::unpin(const InodeFd& inode) noexcept {
  Closing closing(budget_);
  std::lock_guard lock(mu_);
  const auto s = static_cast<uint32_t>(inode.fd_or_slot_);
  if (--slots_[s].pins > 0) return;
  lru_push_locked(s);
  if (open_ > capacity_) evict_locked(capacity_, closing);
}

}  // namespace leasefs::fuse

#include "fuse/inode_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace leasefs::fuse {

namespace {

[[noreturn]] void throw_errno(int err, const char* what) {
  throw std::system_error(err, std::generic_category(), what);
}

}  // namespace

PinnedFd::~PinnedFd() {
  if (owner_) owner_->cache_->unpin(*owner_);
}

InodeFd::InodeFd(base::UniqueFd fd, dev_t dev, FdCache* cache)
    : cache_(cache && cache->handles_for(dev) ? cache : nullptr) {
  if (cache_) {
    cache_->adopt(*this, std::move(fd));
    return;
  }
  if (cache) {
    cache->keep(fd);
    cache_ = cache;
    kept_ = true;
  }
  fd_ = fd.release();
}

InodeFd::~InodeFd() {
  if (!cache_) {
    if (fd_ >= 0) ::close(fd_);
    return;
  }
  cache_->forget(*this);
}

PinnedFd InodeFd::get() const {
  if (!cache_) return PinnedFd(fd_, nullptr);
  return cache_->pin(*this);
}

namespace {

// The handle of the file open on `fd`, or "" (errno set).
std::string handle_of_fd(int fd) {
  struct {
    struct file_handle fh;
    unsigned char bytes[MAX_HANDLE_SZ];
  } buf{};
  buf.fh.handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  if (::name_to_handle_at(fd, "", &buf.fh, &mount_id, AT_EMPTY_PATH) != 0) return {};
  return std::string(reinterpret_cast<const char*>(&buf.fh), sizeof buf.fh + buf.fh.handle_bytes);
}

}  // namespace

FdCache::FdCache(int root_fd, dev_t dev, FdBudget& budget, size_t capacity)
    : mount_fd_(::openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)),
      dev_(dev),
      budget_(budget),
      capacity_(capacity > 0 ? capacity : 1) {
  if (!mount_fd_) handles_ok_.store(false);  // every inode keeps its fd then
  budget_.set_reclaimer([this] {
    std::lock_guard lock(mu_);
    return evict_locked(open_ > 0 ? open_ - 1 : 0);
  });
}

FdCache::~FdCache() {
  budget_.set_reclaimer(nullptr);
  std::lock_guard lock(mu_);
  evict_locked(0);
}

bool FdCache::same_file(const InodeFd& inode, base::UniqueFd& fd) {
  std::lock_guard lock(mu_);
  if (inode.fd_ >= 0 || inode.kept_) return true;
  if (inode.handle_ != handle_of_fd(fd.get())) return false;
  // Same file, evicted: the fresh fd saves a reopen.
  if (take_slot_locked()) {
    inode.fd_ = fd.release();
    ++open_;
    lru_.push_back(&inode);
    inode.lru_pos_ = std::prev(lru_.end());
    inode.in_lru_ = true;
  }
  return true;
}

FdCache::Stats FdCache::stats() const {
  std::lock_guard lock(mu_);
  return Stats{open_, capacity_, kept_, hits_, misses_, evictions_};
}

bool FdCache::evict_locked(size_t target) noexcept {
  bool any = false;
  while (open_ > target && !lru_.empty()) {
    const InodeFd* victim = lru_.front();
    lru_.pop_front();
    victim->in_lru_ = false;
    if (victim->handle_.empty()) {
      victim->handle_ = handle_of_fd(victim->fd_);
      if (victim->handle_.empty()) {
        // No handle after all: this inode keeps its fd (counted as kept).
        if (errno == EOPNOTSUPP) handles_ok_.store(false);
        victim->kept_ = true;
        --open_;
        ++kept_;
        continue;
      }
    }
    ::close(victim->fd_);
    victim->fd_ = -1;
    --open_;
    ++evictions_;
    budget_.give_back();
    any = true;
  }
  return any;
}

bool FdCache::take_slot_locked() noexcept {
  if (open_ >= capacity_) evict_locked(capacity_ - 1);
  while (!budget_.try_take()) {
    if (!evict_locked(open_ > 0 ? open_ - 1 : 0)) return false;
  }
  return true;
}

void FdCache::adopt(const InodeFd& inode, base::UniqueFd fd) {
  std::lock_guard lock(mu_);
  if (!take_slot_locked()) {
    // No room: keep only the handle (the fd closes here), or fail.
    inode.handle_ = handle_of_fd(fd.get());
    if (inode.handle_.empty()) {
      budget_.note_refused();
      throw_errno(EMFILE, "no descriptor left for an inode without a file handle");
    }
    return;
  }
  inode.fd_ = fd.release();
  ++open_;
  lru_.push_back(&inode);
  inode.lru_pos_ = std::prev(lru_.end());
  inode.in_lru_ = true;
}

void FdCache::keep(base::UniqueFd& fd) {
  std::lock_guard lock(mu_);
  if (!take_slot_locked()) {
    budget_.note_refused();
    throw_errno(EMFILE, "no descriptor left for an inode without a file handle");
  }
  ++kept_;
  (void)fd;
}

void FdCache::forget(const InodeFd& inode) noexcept {
  std::lock_guard lock(mu_);
  if (inode.fd_ < 0) return;
  if (inode.in_lru_) lru_.erase(inode.lru_pos_);
  inode.in_lru_ = false;
  ::close(inode.fd_);
  inode.fd_ = -1;
  if (inode.kept_) {
    --kept_;
  } else {
    --open_;
  }
  budget_.give_back();
}

PinnedFd FdCache::pin(const InodeFd& inode) {
  {
    std::lock_guard lock(mu_);
    if (inode.fd_ >= 0) {
      if (inode.in_lru_) {
        lru_.erase(inode.lru_pos_);
        inode.in_lru_ = false;
      }
      ++inode.pins_;
      ++hits_;
      return PinnedFd(inode.fd_, &inode);
    }
    ++misses_;
  }
  // Reopen outside the lock (it may read the inode from disk).
  auto* fh = reinterpret_cast<struct file_handle*>(const_cast<char*>(inode.handle_.data()));
  base::UniqueFd fd(::open_by_handle_at(mount_fd_.get(), fh, O_PATH | O_CLOEXEC));
  if (!fd && (errno == EMFILE || errno == ENFILE)) {
    {
      std::lock_guard lock(mu_);
      evict_locked(open_ > 0 ? open_ - 1 : 0);
    }
    fd.reset(::open_by_handle_at(mount_fd_.get(), fh, O_PATH | O_CLOEXEC));
  }
  if (!fd) {
    const int err = errno;
    if (err == EMFILE || err == ENFILE) budget_.note_refused();
    throw_errno(err, "reopen an inode by its handle");
  }
  std::lock_guard lock(mu_);
  if (inode.fd_ < 0) {
    if (!take_slot_locked()) {
      budget_.note_refused();
      throw_errno(EMFILE, "no descriptor left for the inode cache");
    }
    inode.fd_ = fd.release();
    ++open_;
  } else if (inode.in_lru_) {  // another thread reopened it meanwhile; ours closes
    lru_.erase(inode.lru_pos_);
    inode.in_lru_ = false;
  }
  ++inode.pins_;
  return PinnedFd(inode.fd_, &inode);
}

void FdCache::unpin(const InodeFd& inode) noexcept {
  std::lock_guard lock(mu_);
  if (--inode.pins_ > 0 || inode.fd_ < 0 || inode.kept_) return;
  lru_.push_back(&inode);
  inode.lru_pos_ = std::prev(lru_.end());
  inode.in_lru_ = true;
  if (open_ > capacity_) evict_locked(capacity_);
}

}  // namespace leasefs::fuse

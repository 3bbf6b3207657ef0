#include "base/disk_reserve.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <vector>

namespace leasefs::base {

namespace {

constexpr auto kInterval = std::chrono::milliseconds(1000);
constexpr auto kMinGap = std::chrono::milliseconds(100);

// Allocates [0, size) of `fd` for real: fallocate, or zeros where the file
// system has no fallocate. False (errno set) when there is no room.
bool allocate(int fd, uint64_t size) {
  if (::fallocate(fd, 0, 0, static_cast<off_t>(size)) == 0) return true;
  if (errno != EOPNOTSUPP) return false;
  const std::vector<char> zeros(1 << 16, 0);
  for (uint64_t off = 0; off < size;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(zeros.size(), size - off));
    const ssize_t w = ::pwrite(fd, zeros.data(), n, static_cast<off_t>(off));
    if (w <= 0) return false;
    off += static_cast<uint64_t>(w);
  }
  return ::fdatasync(fd) == 0;
}

}  // namespace

DiskReserve::DiskReserve(int dir_fd, const std::string& name)
    : fd_(::openat(dir_fd, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) {
  struct statvfs sv {};
  if (fd_ && ::fstatvfs(fd_.get(), &sv) == 0) {
    size_ = std::min<uint64_t>(kMaxBytes, static_cast<uint64_t>(sv.f_blocks) * sv.f_frsize / 8);
  }
  std::lock_guard lock(mu_);
  // Without a ballast there is no reserve to keep, and nothing counts as full.
  if (!allocate_locked() && (!fd_ || size_ == 0)) full_.store(false);
}

void DiskReserve::start(std::function<void()> sweep, std::function<void()> changed) {
  sweep_ = std::move(sweep);
  changed_ = std::move(changed);
  worker_.start("disk-reserve", [this] { run(); });
}

void DiskReserve::stop() {
  worker_.stop();
}

void DiskReserve::no_space() noexcept {
  {
    std::lock_guard lock(mu_);
    // ENOSPC also means a full xattr block or no inode left: with room on the
    // disk, the reserve stays (an agent must not turn the mount full at will).
    if (free_now() < hold_at()) release_locked();
    wake_ = true;
  }
  worker_.wake();
}

DiskReserve::Status DiskReserve::status() const noexcept {
  const bool is_full = full();
  return Status{is_full, is_full ? 0 : size_, free_.load(std::memory_order_relaxed),
                given_up_.load(std::memory_order_relaxed)};
}

uint64_t DiskReserve::free_now() const noexcept {
  struct statvfs sv {};
  if (!fd_ || ::fstatvfs(fd_.get(), &sv) != 0) return 0;
  // Root may use the blocks ext4 keeps for it; any other daemon may not.
  const auto blocks = ::geteuid() == 0 ? sv.f_bfree : sv.f_bavail;
  return static_cast<uint64_t>(blocks) * sv.f_frsize;
}

void DiskReserve::release_locked() noexcept {
  if (full() || !fd_ || size_ == 0) return;
  // The blocks go back to the file system with the truncate.
  if (fd_) (void)::ftruncate(fd_.get(), 0);
  full_.store(true, std::memory_order_release);
  given_up_.fetch_add(1, std::memory_order_relaxed);
}

bool DiskReserve::allocate_locked() noexcept {
  if (!fd_ || size_ == 0) return false;
  if (!allocate(fd_.get(), size_)) {
    (void)::ftruncate(fd_.get(), 0);  // a part allocated is given back
    return false;
  }
  full_.store(false, std::memory_order_release);
  return true;
}

void DiskReserve::run() {
  bool was_full = full();
  std::unique_lock lock(mu_);
  while (!worker_.stopping()) {
    lock.unlock();
    if (sweep_) sweep_();
    const uint64_t free = free_now();
    free_.store(free, std::memory_order_relaxed);
    lock.lock();
    if (worker_.stopping()) break;
    if (!full() && free < size_ / 4) {
      release_locked();
    } else if (full() && size_ > 0 && free >= hold_at() && allocate_locked()) {
      free_.store(free_now(), std::memory_order_relaxed);
    }
    if (const bool now_full = full(); now_full != was_full && changed_) {
      lock.unlock();
      changed_();
      lock.lock();
      was_full = now_full;
    }
    // At most one round per kMinGap, however often ENOSPC is met.
    worker_.wait_for(lock, kMinGap);
    worker_.wait_for(lock, kInterval - kMinGap, [this] { return wake_; });
    wake_ = false;
  }
}

}  // namespace leasefs::base

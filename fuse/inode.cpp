#include "fuse/inode.hpp"

#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>

namespace leasefs::fuse {

namespace {

uint32_t device_number(dev_t dev) {
  if (dev > UINT32_MAX) throw std::system_error(EOVERFLOW, std::generic_category(), "st_dev");
  return static_cast<uint32_t>(dev);
}

uint64_t hash_key(dev_t dev, ino_t ino) noexcept {
  uint64_t h =
      (static_cast<uint64_t>(ino) ^ (static_cast<uint64_t>(dev) << 40)) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

// Home position of `hash` in an index of `size` (any size: multiply-shift, no modulo).
size_t home_of(uint64_t hash, size_t size) noexcept {
  return static_cast<size_t>((static_cast<unsigned __int128>(hash) * size) >> 64);
}

}  // namespace

Inode::Inode(base::UniqueFd fd_in, const struct stat& st, bool is_protected, FdCache* cache)
    : fd(std::move(fd_in), st.st_dev, cache),
      ino(st.st_ino),
      dev(device_number(st.st_dev)),
      type(static_cast<uint16_t>(st.st_mode & S_IFMT)),
      protected_path(is_protected) {}

InodeTable::~InodeTable() {
  // Inodes the kernel never forgot (the session ended first) close their fds.
  std::lock_guard lock(mu_);
  for (uint32_t slot : index_) {
    if (slot != 0) at(slot - 1)->~Inode();
  }
  for (auto& [inode, n] : orphans_) at(n)->~Inode();
}

uint32_t InodeTable::allocate_locked() {
  if (free_head_ != kNone) {
    const uint32_t n = free_head_;
    std::memcpy(&free_head_, chunks_[n / kChunk][n % kChunk].bytes, sizeof free_head_);
    return n;
  }
  if (used_ == kNone) throw std::system_error(ENOMEM, std::generic_category(), "inode table");
  if (used_ / kChunk == chunks_.size()) chunks_.push_back(std::make_unique<Cell[]>(kChunk));
  return used_++;
}

void InodeTable::release_locked(uint32_t n) noexcept {
  std::memcpy(chunks_[n / kChunk][n % kChunk].bytes, &free_head_, sizeof free_head_);
  free_head_ = n;
}

size_t InodeTable::position_locked(dev_t dev, ino_t ino) const noexcept {
  const size_t size = index_.size();
  for (size_t pos = home_of(hash_key(dev, ino), size);; pos = pos + 1 == size ? 0 : pos + 1) {
    const uint32_t slot = index_[pos];
    if (slot == 0) return pos;
    const Inode* inode = at(slot - 1);
    if (inode->ino == ino && inode->dev == dev) return pos;
  }
}

void InodeTable::erase_at_locked(size_t pos) noexcept {
  const size_t size = index_.size();
  auto distance = [size](size_t from, size_t to) {
    return to >= from ? to - from : to + size - from;
  };
  size_t hole = pos;
  for (size_t next = hole + 1 == size ? 0 : hole + 1; index_[next] != 0;
       next = next + 1 == size ? 0 : next + 1) {
    const Inode* inode = at(index_[next] - 1);
    const size_t home = home_of(hash_key(inode->dev, inode->ino), size);
    // `next` may fill the hole unless its home lies cyclically in (hole, next].
    if (distance(home, next) >= distance(hole, next)) {
      index_[hole] = index_[next];
      hole = next;
    }
  }
  index_[hole] = 0;
  --count_;
}

void InodeTable::grow_locked() {
  std::vector<uint32_t> old = std::move(index_);
  // Half again as large, not twice: a million entries fill 1.5M slots, not 2M.
  index_.assign(old.empty() ? 1024 : old.size() + old.size() / 2, 0);
  for (uint32_t slot : old) {
    if (slot == 0) continue;
    const Inode* inode = at(slot - 1);
    index_[position_locked(inode->dev, inode->ino)] = slot;
  }
}

Inode* InodeTable::acquire(base::UniqueFd fd, const struct stat& st, bool is_protected) {
  std::lock_guard lock(mu_);
  // At most 4/5 full, so that probes stay short.
  if ((count_ + 1) * 5 > index_.size() * 4) grow_locked();
  const size_t pos = position_locked(st.st_dev, st.st_ino);
  Inode* inode = index_[pos] != 0 ? at(index_[pos] - 1) : nullptr;
  if (inode && cache_ && !cache_->same_file(inode->fd, fd)) {
    // The number was reused by another file: the old inode leaves the table.
    orphans_.emplace(inode, index_[pos] - 1);
    erase_at_locked(pos);
    inode = nullptr;
  }
  if (!inode) {
    const uint32_t n = allocate_locked();
    try {
      inode = new (chunks_[n / kChunk][n % kChunk].bytes)
          Inode(std::move(fd), st, is_protected, cache_);
    } catch (...) {
      release_locked(n);
      throw;
    }
    // The position may have moved if an orphan was erased above.
    index_[position_locked(st.st_dev, st.st_ino)] = n + 1;
    ++count_;
  }
  if (is_protected) inode->protected_path.store(true, std::memory_order_relaxed);
  ++inode->nlookup;
  return inode;
}

void InodeTable::forget(Inode* inode, uint64_t n) {
  uint32_t doomed = kNone;
  {
    std::lock_guard lock(mu_);
    if (n < inode->nlookup) {
      inode->nlookup -= n;
      return;
    }
    const size_t pos = position_locked(inode->dev, inode->ino);
    if (index_[pos] != 0 && at(index_[pos] - 1) == inode) {
      doomed = index_[pos] - 1;
      erase_at_locked(pos);
    } else if (auto o = orphans_.find(inode); o != orphans_.end()) {
      doomed = o->second;
      orphans_.erase(o);
    }
  }
  if (doomed == kNone) return;
  inode->~Inode();  // closes its fd, outside the lock
  std::lock_guard lock(mu_);
  release_locked(doomed);
}

const Inode* InodeTable::find(dev_t dev, ino_t ino) const {
  std::lock_guard lock(mu_);
  if (index_.empty()) return nullptr;
  const uint32_t slot = index_[position_locked(dev, ino)];
  return slot == 0 ? nullptr : at(slot - 1);
}

void InodeTable::protect(dev_t dev, ino_t ino) {
  std::lock_guard lock(mu_);
  if (index_.empty()) return;
  if (const uint32_t slot = index_[position_locked(dev, ino)]; slot != 0) {
    at(slot - 1)->protected_path.store(true, std::memory_order_relaxed);
  }
}

size_t InodeTable::size() const {
  std::lock_guard lock(mu_);
  return count_;
}

}  // namespace leasefs::fuse

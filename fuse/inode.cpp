#include "fuse/inode.hpp"

namespace leasefs::fuse {

Inode* InodeTable::acquire(base::UniqueFd fd, const struct stat& st, bool is_protected) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = inodes_.try_emplace(Key{st.st_dev, st.st_ino});
  if (!inserted && cache_ && !cache_->same_file(it->second->fd, fd)) {
    // The number was reused by another file: the old inode leaves the table.
    Inode* old = it->second.get();
    orphans_.emplace(old, std::move(it->second));
    inserted = true;
  }
  if (inserted) {
    try {
      it->second = std::make_unique<Inode>(std::move(fd), st, is_protected, cache_);
    } catch (...) {
      inodes_.erase(it);
      throw;
    }
  }
  Inode* inode = it->second.get();
  if (is_protected) inode->protected_path.store(true, std::memory_order_relaxed);
  ++inode->nlookup;
  return inode;
}

void InodeTable::forget(Inode* inode, uint64_t n) {
  std::unique_ptr<Inode> doomed;  // closed outside the lock
  std::lock_guard lock(mu_);
  if (n >= inode->nlookup) {
    auto it = inodes_.find(Key{inode->dev, inode->ino});
    if (it != inodes_.end() && it->second.get() == inode) {
      doomed = std::move(it->second);
      inodes_.erase(it);
    } else if (auto o = orphans_.find(inode); o != orphans_.end()) {
      doomed = std::move(o->second);
      orphans_.erase(o);
    }
  } else {
    inode->nlookup -= n;
  }
}

const Inode* InodeTable::find(dev_t dev, ino_t ino) const {
  std::lock_guard lock(mu_);
  auto it = inodes_.find(Key{dev, ino});
  return it == inodes_.end() ? nullptr : it->second.get();
}

size_t InodeTable::size() const {
  std::lock_guard lock(mu_);
  return inodes_.size();
}

}  // namespace leasefs::fuse

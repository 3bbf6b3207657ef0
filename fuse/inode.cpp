#include "fuse/inode.hpp"

namespace leasefs::fuse {

Inode* InodeTable::acquire(UniqueFd fd, const struct stat& st, bool is_protected) {
  std::string handle = cache_ ? cache_->handle_of(fd.get(), st.st_dev) : std::string();
  Key key{st.st_dev, handle.empty() ? "i" + std::to_string(st.st_ino) : "h" + handle};
  std::lock_guard lock(mu_);
  auto [it, inserted] = inodes_.try_emplace(std::move(key));
  if (inserted) {
    try {
      it->second =
          std::make_unique<Inode>(std::move(fd), st, is_protected, std::move(handle), cache_);
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
    auto it = inodes_.find(Key{inode->dev, inode->table_id});
    if (it != inodes_.end() && it->second.get() == inode) {
      doomed = std::move(it->second);
      inodes_.erase(it);
    }
  } else {
    inode->nlookup -= n;
  }
}

size_t InodeTable::size() const {
  std::lock_guard lock(mu_);
  return inodes_.size();
}

}  // namespace leasefs::fuse

// The inode table. A kernel node id (fuse_ino_t) is the address of an Inode; an
// Inode holds an O_PATH descriptor on the backing file and never a path, so a
// rename underneath can never leave a stale name behind. Entries are keyed by the
// backing (st_dev, st_ino) and live while the kernel holds lookups on them.
//
// Because every known inode is pinned by its O_PATH descriptor, the backing
// filesystem cannot reuse its inode number while we still map it, so a key never
// names two different files.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "base/unique_fd.hpp"

namespace leasefs::fuse {

using base::UniqueFd;

struct Inode {
  Inode(base::UniqueFd fd_in, const struct stat& st, bool is_protected)
      : fd(std::move(fd_in)),
        dev(st.st_dev),
        ino(st.st_ino),
        type(st.st_mode & S_IFMT),
        protected_path(is_protected) {}
  Inode(const Inode&) = delete;
  Inode& operator=(const Inode&) = delete;

  const base::UniqueFd fd;  // O_PATH | O_NOFOLLOW | O_CLOEXEC on the backing file
  const dev_t dev;
  const ino_t ino;
  const mode_t type;  // S_IFMT bits; a file never changes type
  // `.longrun` under the root or anything below it (I5). Set from the name at
  // lookup time; sticky, so a hard link cannot launder it.
  std::atomic<bool> protected_path;
  // security.capability as last seen: -1 unknown, 0 absent, 1 present. Only we
  // change the tree underneath, so the answer can be cached (see op_xattr.cpp).
  std::atomic<int8_t> capability{-1};

  uint64_t nlookup = 0;  // guarded by InodeTable::mu_
};

class InodeTable {
 public:
  // Finds or adds the inode for `st`, taking one lookup reference. `fd` is kept
  // for a new inode and closed otherwise.
  Inode* acquire(base::UniqueFd fd, const struct stat& st, bool is_protected);
  // Drops `n` lookup references; the inode (and its fd) goes away at zero.
  void forget(Inode* inode, uint64_t n);
  size_t size() const;

 private:
  struct Key {
    dev_t dev;
    ino_t ino;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept {
      return std::hash<uint64_t>{}(static_cast<uint64_t>(k.ino) * 0x9e3779b97f4a7c15ull ^
                                   static_cast<uint64_t>(k.dev));
    }
  };
  mutable std::mutex mu_;
  std::unordered_map<Key, std::unique_ptr<Inode>, KeyHash> inodes_;  // guarded by mu_
};

}  // namespace leasefs::fuse

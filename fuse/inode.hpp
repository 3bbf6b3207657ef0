// The inode table. A kernel node id (fuse_ino_t) is the address of an Inode; an
// Inode reaches its backing file by file handle or O_PATH descriptor and never by
// path, so a rename underneath can never leave a stale name behind. Entries live
// while the kernel holds lookups on them.
//
// Entries are keyed by the backing (st_dev, st_ino). While an inode's O_PATH
// fd is open its number cannot be reused; once the fd was evicted (see
// inode_fd.hpp) a lookup that finds the same number compares file handles,
// which carry the generation, and a different file replaces the old entry
// (the old Inode lives on, out of the table, until the kernel forgets it).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/unique_fd.hpp"
#include "fuse/inode_fd.hpp"

namespace leasefs::fuse {

using base::UniqueFd;

struct Inode {
  // `cache`: see InodeFd; without one the fd is kept for life.
  Inode(base::UniqueFd fd_in, const struct stat& st, bool is_protected, FdCache* cache = nullptr)
      : fd(std::move(fd_in), st.st_dev, cache),
        dev(st.st_dev),
        ino(st.st_ino),
        type(st.st_mode & S_IFMT),
        protected_path(is_protected) {}
  Inode(const Inode&) = delete;
  Inode& operator=(const Inode&) = delete;

  // O_PATH | O_NOFOLLOW | O_CLOEXEC on the backing file, pinned by fd.get().
  const InodeFd fd;
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
  // With `cache`, inodes on its file system are kept by handle (see inode_fd.hpp).
  explicit InodeTable(FdCache* cache = nullptr) noexcept : cache_(cache) {}
  // Finds or adds the inode for `st`, taking one lookup reference. `fd` is kept
  // for a new inode and closed otherwise.
  // Throws std::system_error(EMFILE) when a new inode without a handle cannot
  // keep its descriptor.
  Inode* acquire(base::UniqueFd fd, const struct stat& st, bool is_protected);
  // Drops `n` lookup references; the inode (and its fd) goes away at zero.
  void forget(Inode* inode, uint64_t n);
  size_t size() const;
  // The inode for (dev, ino), if the kernel knows one; only its address is
  // meant to be used (a node id), the inode may be forgotten at once.
  const Inode* find(dev_t dev, ino_t ino) const;

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
  FdCache* cache_;
  mutable std::mutex mu_;
  std::unordered_map<Key, std::unique_ptr<Inode>, KeyHash> inodes_;  // guarded by mu_
  // Replaced by a new file with the same number; alive until forgotten. Guarded by mu_.
  std::unordered_map<const Inode*, std::unique_ptr<Inode>> orphans_;
};

}  // namespace leasefs::fuse

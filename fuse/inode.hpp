// The inode table. A kernel node id (fuse_ino_t) is the address of an Inode; an
// Inode reaches its backing file by file handle or O_PATH descriptor and never by
// path, so a rename underneath can never leave a stale name behind. Entries live
// while the kernel holds lookups on them.
//
// Entries are keyed by st_dev and the file's handle, which carries the inode's
// generation: a file deleted while the kernel still remembers it and a new file
// given the same inode number are two keys. Inodes without a handle keep their
// O_PATH descriptor open (see inode_fd.hpp), so their inode number cannot be
// reused while we map it, and they are keyed by (st_dev, st_ino).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "fuse/inode_fd.hpp"
#include "gate/unique_fd.hpp"

namespace leasefs::fuse {

using gate::UniqueFd;

struct Inode {
  // `handle` and `cache`: see InodeFd; without them the fd is kept for life.
  Inode(UniqueFd fd_in, const struct stat& st, bool is_protected, std::string handle = {},
        FdCache* cache = nullptr)
      : table_id(handle.empty() ? "i" + std::to_string(st.st_ino) : "h" + handle),
        fd(std::move(fd_in), std::move(handle), cache),
        dev(st.st_dev),
        ino(st.st_ino),
        type(st.st_mode & S_IFMT),
        protected_path(is_protected) {}
  Inode(const Inode&) = delete;
  Inode& operator=(const Inode&) = delete;

  const std::string table_id;  // the key in InodeTable, with dev
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
  Inode* acquire(UniqueFd fd, const struct stat& st, bool is_protected);
  // Drops `n` lookup references; the inode (and its fd) goes away at zero.
  void forget(Inode* inode, uint64_t n);
  size_t size() const;

 private:
  struct Key {
    dev_t dev;
    std::string id;  // Inode::table_id
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept {
      return std::hash<std::string>{}(k.id) * 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(k.dev);
    }
  };
  FdCache* cache_;
  mutable std::mutex mu_;
  std::unordered_map<Key, std::unique_ptr<Inode>, KeyHash> inodes_;  // guarded by mu_
};

}  // namespace leasefs::fuse

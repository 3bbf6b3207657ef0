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
//
// The kernel may hold a million inodes after a walk over a large tree, so an
// entry is kept small: a 48-byte Inode in a pool of fixed-address chunks (the
// node id must not move), and a 4-byte pool number in an open-addressing index.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/unique_fd.hpp"
#include "fuse/inode_fd.hpp"

namespace leasefs::fuse {

using base::UniqueFd;

struct Inode {
  // `cache`: see InodeFd; without one the fd is kept for life.
  // Throws std::system_error(EOVERFLOW) for a device number beyond 32 bits,
  // which Linux does not make (its dev_t is 32 bits wide).
  Inode(base::UniqueFd fd_in, const struct stat& st, bool is_protected, FdCache* cache = nullptr);
  Inode(const Inode&) = delete;
  Inode& operator=(const Inode&) = delete;

  // O_PATH | O_NOFOLLOW | O_CLOEXEC on the backing file, pinned by fd.get().
  const InodeFd fd;
  const ino_t ino;
  uint64_t nlookup = 0;  // guarded by InodeTable::mu_
  const uint32_t dev;
  const uint16_t type;  // S_IFMT bits; a file never changes type
  // `.longrun` under the root or anything below it (I5). Set from the name at
  // lookup time; sticky, so a hard link cannot launder it.
  std::atomic<bool> protected_path;
  // security.capability as last seen: -1 unknown, 0 absent, 1 present. Only we
  // change the tree underneath, so the answer can be cached (see op_xattr.cpp).
  std::atomic<int8_t> capability{-1};
};
static_assert(sizeof(Inode) <= 48, "one Inode per inode the kernel holds: keep it small");

class InodeTable {
 public:
  // With `cache`, inodes on its file system are kept by handle (see inode_fd.hpp).
  explicit InodeTable(FdCache* cache = nullptr) noexcept : cache_(cache) {}
  ~InodeTable();
  InodeTable(const InodeTable&) = delete;
  InodeTable& operator=(const InodeTable&) = delete;
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
  // The file (dev, ino) has moved into .longrun (a leftover taken into the
  // journal): every later operation on the inode the kernel holds for it,
  // through a descriptor opened before, is judged as on .longrun (I5).
  void protect(dev_t dev, ino_t ino);

 private:
  static constexpr uint32_t kChunk = 1024;  // inodes per pool chunk
  static constexpr uint32_t kNone = UINT32_MAX;
  struct alignas(Inode) Cell {
    unsigned char bytes[sizeof(Inode)];
  };

  Inode* at(uint32_t n) const noexcept {
    return reinterpret_cast<Inode*>(chunks_[n / kChunk][n % kChunk].bytes);
  }
  // With mu_ held. A free pool number (storage only: no Inode in it yet).
  uint32_t allocate_locked();
  void release_locked(uint32_t n) noexcept;
  // With mu_ held. The index position holding (dev, ino), or the empty one where
  // it would go.
  size_t position_locked(dev_t dev, ino_t ino) const noexcept;
  // With mu_ held. Empties index position `pos` (backward shift: no tombstones).
  void erase_at_locked(size_t pos) noexcept;
  void grow_locked();

  FdCache* cache_;
  mutable std::mutex mu_;
  // All guarded by mu_.
  std::vector<std::unique_ptr<Cell[]>> chunks_;
  uint32_t used_ = 0;           // pool numbers handed out so far, [0, used_)
  uint32_t free_head_ = kNone;  // freed pool numbers, linked through their cells
  // Open addressing, linear probing; 1 + pool number, 0 when empty.
  std::vector<uint32_t> index_;
  size_t count_ = 0;  // entries in index_
  // Replaced by a new file with the same number; alive until forgotten.
  std::unordered_map<const Inode*, uint32_t> orphans_;
};

}  // namespace leasefs::fuse

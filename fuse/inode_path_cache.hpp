// The paths of inodes the gate judges without a file handle: the directory a
// create, mkdir, link, unlink or rename happens in, and a file whose times or
// mode are set by name (`touch`, tar restoring them). Without it each costs a
// readlink of /proc/self/fd/N; an untar or a `git add` makes thousands of
// entries in a few hundred directories. A write through an open file has the
// handle's own CachedPath (path_cache.hpp).
//
// Valid by the rule of path_cache.hpp: an entry is used only at the generation
// it was resolved at (a directory's, or every name's for anything else), and
// every change that can move it bumps that one, so within one generation an
// entry is what a readlink would say. Entries are keyed by (st_dev, st_ino) and
// whether the inode is a directory, since the two generations count apart. Under stable names an
// inode number is freed for reuse only by a removal through the mount (which bumps) or by the
// daemon's own removals inside .longrun, whose paths the gate refuses anyway; an inode with a
// reused number inside .longrun is protected by its own sticky flag, not by its path (inode.hpp),
// so a stale .longrun path can only refuse.
//
// A fixed number of slots, each with its own lock: the memory does not grow
// with the tree, and two inodes that share a slot only resolve afresh.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace leasefs::fuse {

class InodePathCache {
 public:
  // The path of inode (dev, ino), if it was resolved at generation `gen`.
  std::optional<std::string> at(uint64_t dev, uint64_t ino, bool dir, uint64_t gen) const {
    const Slot& s = slot(dev, ino);
    std::lock_guard lock(s.mu);
    if (s.gen != gen || s.dev != dev || s.ino != ino || s.dir != dir) return std::nullopt;
    return s.path;
  }
  // `gen` is the generation read before `path` was resolved.
  void store(uint64_t dev, uint64_t ino, bool dir, uint64_t gen, std::string path) {
    Slot& s = slot(dev, ino);
    std::lock_guard lock(s.mu);
    const bool same = s.dev == dev && s.ino == ino && s.dir == dir;
    if (same && gen < s.gen) return;  // keep the newer resolve that is there
    s.dev = dev;
    s.ino = ino;
    s.dir = dir;
    s.gen = gen;
    s.path = std::move(path);
  }

 private:
  static constexpr unsigned kSlotBits = 10;  // 1,024 slots
  struct Slot {
    mutable std::mutex mu;
    uint64_t dev = 0;
    uint64_t ino = 0;
    bool dir = false;
    uint64_t gen = 0;  // 0: nothing stored (generations start at 1)
    std::string path;
  };

  // Fibonacci hashing: the top bits of the product, so that neighbouring inode
  // numbers spread over the slots.
  static size_t index(uint64_t dev, uint64_t ino) {
    return static_cast<size_t>(((ino ^ (dev << 32)) * 0x9E3779B97F4A7C15ULL) >> (64 - kSlotBits));
  }
  Slot& slot(uint64_t dev, uint64_t ino) { return slots_[index(dev, ino)]; }
  const Slot& slot(uint64_t dev, uint64_t ino) const { return slots_[index(dev, ino)]; }

  std::array<Slot, size_t{1} << kSlotBits> slots_;
};

}  // namespace leasefs::fuse

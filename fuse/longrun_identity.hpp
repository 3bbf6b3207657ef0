// `.longrun` has one name (I5). Protection by name alone misses the same objects
// reached another way: a hard link to `.longrun/audit.log` made in the tree before
// the mount, a bind mount of `.longrun` elsewhere in the tree, or `.LONGRUN` in a
// casefolded directory. So an object is also protected by identity: a directory
// whose (st_dev, st_ino) is `.longrun`'s, or a file with more than one link that
// is one of the files inside `.longrun` (only files with several links pay for
// the check).
//
// When only the daemon changes the tree underneath (FsOptions::stable_names),
// `.longrun`'s files with several names are listed once, whole, when first
// needed: nothing can give one of its files another name afterwards (through
// the mount a link from or into `.longrun` is refused, the daemon makes none, and
// a file it moves in has one name), so the list stays true. Otherwise `.longrun`
// is searched for the file on every such lookup, at most kMaxScan entries deep,
// and a search cut short counts as found (fail closed).
//
// `.longrun`'s identity is taken from the root's descriptor (underneath any
// mount) when first needed and kept; the daemon creates it before mounting.
#pragma once

#include <dirent.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

namespace leasefs::fuse {

class LongrunIdentity {
 public:
  LongrunIdentity(int root_fd, bool stable) : root_fd_(root_fd), stable_(stable) {}

  // Whether the object `st` describes is .longrun or one of its files, whatever
  // name it was reached by.
  bool protects(const struct stat& st) const;

  static constexpr int kMaxScan = 4096;  // entries of .longrun searched, at most, when not stable

 private:
  using Key = std::pair<uint64_t, uint64_t>;  // (st_dev, st_ino)

  bool longrun_dir(dev_t* dev, ino_t* ino) const;
  // Calls `visit` with each directory descriptor and entry below .longrun,
  // breadth-first, until it returns false. True when every entry was visited
  // (every directory opened and read to its end, and `visit` never said stop).
  bool walk(const std::function<bool(int dir_fd, const dirent& ent)>& visit) const;
  bool search(const struct stat& st) const;  // not stable
  bool listed(const struct stat& st) const;  // stable

  int root_fd_;  // owned by the filesystem
  const bool stable_;
  mutable std::atomic<bool> known_{false};
  mutable std::atomic<uint64_t> dev_{0}, ino_{0};
  mutable std::mutex list_mu_;
  mutable bool list_taken_ = false;  // guarded by list_mu_, as linked_
  mutable std::vector<Key> linked_;  // sorted: files below .longrun with several names
};

}  // namespace leasefs::fuse

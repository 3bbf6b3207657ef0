// `.longrun` has one name (I5). Protection by name alone misses the same objects
// reached another way: a hard link to `.longrun/audit.log` made in the tree before
// the mount, a bind mount of `.longrun` elsewhere in the tree, or `.LONGRUN` in a
// casefolded directory. So an object is also protected by identity: a directory
// whose (st_dev, st_ino) is `.longrun`'s, or a file with more than one link that
// is one of the files inside `.longrun` (checked by listing `.longrun`, bounded;
// only files with several links pay for it).
//
// `.longrun`'s identity is taken from the root's descriptor (underneath any
// mount) when first needed and kept; the daemon creates it before mounting.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>

namespace leasefs::fuse {

class LongrunIdentity {
 public:
  explicit LongrunIdentity(int root_fd) : root_fd_(root_fd) {}

  // Whether the object `st` describes is .longrun or one of its files, whatever
  // name it was reached by.
  bool protects(const struct stat& st) const;

  static constexpr int kMaxScan = 4096;  // entries of .longrun examined, at most

 private:
  bool longrun_dir(dev_t* dev, ino_t* ino) const;

  int root_fd_;  // owned by the filesystem
  mutable std::atomic<bool> known_{false};
  mutable std::atomic<uint64_t> dev_{0}, ino_{0};
};

}  // namespace leasefs::fuse

// Kernel passthrough for read-only opens (libfuse 3.18, Linux 6.9+): the kernel
// reads such a file, and maps it, straight from the backing file, without a
// request to the daemon. Only opens that cannot write are passed through: a
// passthrough write would never reach the daemon, so no revoke could stop it
// (I6). The kernel keeps the open file's access mode, so the fd cannot become
// writable (fcntl cannot change it; a reopen through /proc/self/fd is a new open,
// gated as any), and it refuses a shared writable mapping of it.
//
// The kernel holds each inode in one I/O mode at a time: while one file of it
// is passed through, every other open of it must be passed through too (the
// kernel fails any other with EIO), and name the same backing file. A writable
// open passed through is no answer: measured on Linux 6.18, even with
// FOPEN_DIRECT_IO (which sends its reads and writes to the daemon) a shared
// writable mapping of it maps the backing file itself, and its writes land
// there after a revoke. So the daemon counts, per inode, the handles it gave in
// each mode:
//  - a read-only open is passed through unless a page-cached handle is open
//    (then it is cached, as without passthrough);
//  - a writable open while a passed-through one is open fails with ETXTBSY,
//    before anything is opened or truncated.
// That refusal is why passthrough is asked for (leasefs mount
// --passthrough-reads), not the default: `tail -f log` beside `cmd >> log`
// would see the writer fail. The kernel enters a mode after the daemon counts
// it and leaves it before the daemon hears the release, so the daemon's counts
// never miss a mode the kernel holds.
#pragma once

#include <fuse_lowlevel.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "fuse/libfuse_features.hpp"

namespace leasefs::fuse {

struct Inode;

enum class IoMode : uint8_t { kUntracked, kCached, kPassthrough, kRefused };

class IoModes {
 public:
  // At INIT: whether the kernel passes files through for us.
  void enable(bool on) noexcept { enabled_ = on; }
  bool enabled() const noexcept { return enabled_; }

  // A writable open of `inode`, before the file is opened: kCached (or
  // kUntracked when off, or for `protected_file`, which is direct_io), or
  // kRefused while a passed-through handle is open (the caller fails ETXTBSY).
  IoMode open_writer(const Inode* inode, bool protected_file);
  // A read-only open through `fd` (the handle's own descriptor): passed
  // through (fi->backing_id set) when it may be, else as open_writer's.
  IoMode open_reader(fuse_req_t req, const Inode* inode, int fd, bool protected_file,
                     fuse_file_info* fi);
  // The handle opened in `mode` is released, or its open failed or never
  // reached the caller.
  void closed(fuse_req_t req, const Inode* inode, IoMode mode);

  size_t passthrough_open() const;  // handles passed through now, for status

 private:
  struct State {
    int32_t backing_id = 0;  // while passthrough > 0
    unsigned passthrough = 0;
    unsigned cached = 0;
  };
  bool enabled_ = false;
  mutable std::mutex mu_;
  std::unordered_map<const Inode*, State> states_;  // guarded by mu_
  size_t passthrough_total_ = 0;                    // guarded by mu_
};

}  // namespace leasefs::fuse

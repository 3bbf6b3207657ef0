// Opening files for the kernel: flags, gating of write opens, cache policy.
#pragma once

#include <fcntl.h>

#include "fuse/filesystem.hpp"

namespace leasefs::fuse {

// O_WRONLY, O_RDWR, O_TRUNC or O_APPEND: the open itself is a mutation to ask about.
inline bool opens_for_write(int flags) noexcept {
  return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_APPEND)) != 0;
}

// Cache policy for an open file, written where it bites:
//  - under .longrun the daemon writes underneath: direct_io, so a read through the
//    mount always reaches the file (no page cache to go stale);
//  - elsewhere keep_cache: only this mount changes the tree, and writes through it
//    update or invalidate the cached pages themselves;
//  - noflush: there is no flush handler, nothing to ask on close.
inline void apply_cache_policy(fuse_file_info* fi, bool is_protected) noexcept {
  fi->direct_io = is_protected ? 1 : 0;
  fi->keep_cache = is_protected ? 0 : 1;
  fi->noflush = 1;
}

}  // namespace leasefs::fuse

// A directory tree named relative to a directory descriptor, walked without
// following a symbolic link anywhere: what leasefs removes under a tree that
// other users may have written while it was not mounted.
#pragma once

#include <cstdint>

namespace leasefs::base {

// Bytes allocated to `name` in `parent_fd` and, for a directory, to everything
// beneath it (st_blocks, so sparse files count as what they take). 0 if absent.
uint64_t tree_bytes_at(int parent_fd, const char* name) noexcept;

// Removes `name` in `parent_fd`, a directory with everything beneath it or any
// other file (a symbolic link is removed, never followed). 0, or -errno of the
// first failure (what could be removed is).
int remove_tree_at(int parent_fd, const char* name) noexcept;

}  // namespace leasefs::base

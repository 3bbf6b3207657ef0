// Listing what a directory rename would move, for the gate (gate/effect.hpp).
//
// The walk is breadth-first and holds one descriptor at a time: each directory is
// opened from the top one with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so
// a directory swapped for a symlink mid-walk cannot lead it elsewhere. It is
// bounded: past kMaxSubtreeEntries names, kMaxSubtreeDepth levels, or a relative
// path that with the directory's own path would reach PATH_MAX, it stops and
// returns an incomplete subtree, which only an unscoped grant covers.
#pragma once

#include <cstddef>

#include "gate/effect.hpp"

namespace leasefs::fuse {

inline constexpr size_t kMaxSubtreeEntries = 65536;
inline constexpr size_t kMaxSubtreeDepth = 256;

// The subtree of `name` in directory `parent_fd` (not including itself).
// `prefix_len`: length of the directory's own path relative to the root.
gate::Subtree list_subtree(int parent_fd, const char* name, size_t prefix_len);

}  // namespace leasefs::fuse

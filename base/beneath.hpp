// Paths under a root, reached without following any symlink: the daemon runs
// as root and the tree is the agent's, so a planted symlink must never lead a
// journal read, an undo write or a path check of the filesystem outside the
// root (or into .longrun).
#pragma once

#include <string>
#include <string_view>

#include "base/unique_fd.hpp"

namespace leasefs::base {

// The directory holding `path` (relative to the root, "a/b/c" -> "a/b"), as an
// O_PATH descriptor, and the last name in `*name`. Empty fd with errno set when
// the parent cannot be reached (missing, a symlink on the way, outside the root).
UniqueFd open_parent(int root_fd, std::string_view path, std::string* name);

// `path` itself opened with `flags` (O_NOFOLLOW added); empty fd and errno on failure.
UniqueFd open_beneath(int root_fd, std::string_view path, int flags);

}  // namespace leasefs::base

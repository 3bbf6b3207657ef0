// Roots mounted already, where a new daemon would go: at its root or mount
// point (a dead mount is taken over; a live one is an error), or above it.
// Roots cannot nest: a daemon whose root is reached through another daemon's
// mount would make its .longrun through it (refused, or filed as an ask there)
// and gate what the outer one already gates. (A mount point inside another
// mount, over a root reached underneath, is fine: its .longrun is made there.)
// Both are checked before anything is written.
#pragma once

#include <optional>
#include <string>

namespace leasefs::daemon {

// A leasefs mount at `path`: taken over if dead (*dead = true, and a note on
// stderr), an error naming `root` and its daemon if alive (false).
bool check_existing_mount(const std::string& path, const std::string& root, bool* dead,
                          std::string* error);

// Why `path` (absolute, normalized) cannot be a root: it lies inside a leasefs
// mount (not at it: check_existing_mount handles that), or nullopt.
std::optional<std::string> nested_in_a_root(const std::string& path);

}  // namespace leasefs::daemon

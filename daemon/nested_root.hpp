// Roots cannot nest: a daemon for a directory inside another daemon's root
// would make its .longrun through the outer mount (refused, or filed as an ask
// there) and gate what the outer one already gates. Refused before anything is
// written.
#pragma once

#include <optional>
#include <string>

namespace leasefs::daemon {

// Why `path` (absolute, normalized) cannot be a root or mount point: it lies
// inside a leasefs mount (not at it: check_existing_mount handles that), or
// nullopt.
std::optional<std::string> nested_in_a_root(const std::string& path);

}  // namespace leasefs::daemon

// The leasefs mounts this process can see, from /proc/self/mountinfo.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/mountinfo.hpp"

namespace leasefs::daemon {

using base::MountEntry;

using base::leasefs_mount_at;

// Runs `fusermount3 ARGS... PATH` (no shell); true on exit status 0.
bool fusermount(const std::vector<std::string>& args, const std::string& path);

}  // namespace leasefs::daemon

// The leasefs mounts this process can see, from /proc/self/mountinfo.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace leasefs::fuse {

struct MountEntry {
  std::string mount_point;
  std::string fstype;  // "fuse.leasefs"
  std::string source;  // the root path (fsname)
  std::string device;  // "major:minor"; for FUSE the minor names the connection
};

std::vector<MountEntry> read_mounts();
// The fuse.leasefs mount whose mount point is exactly `path`, if any.
std::optional<MountEntry> leasefs_mount_at(const std::string& path);

// Runs `fusermount3 ARGS... PATH` (no shell); true on exit status 0.
bool fusermount(const std::vector<std::string>& args, const std::string& path);

}  // namespace leasefs::fuse

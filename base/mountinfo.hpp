// The mount table as /proc/self/mountinfo lists it, parsed in one place.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace leasefs::base {

struct MountEntry {
  int mount_id = -1;          // unique while the mount exists; reused after it is gone
  std::string mount_point;    // unescaped
  std::string fstype;         // "fuse.leasefs", "ext4", ...
  std::string source;         // unescaped; for leasefs the root path (fsname)
  std::string device;         // "major:minor"; for FUSE the minor names the connection
  std::string super_options;  // per-superblock options; for FUSE "user_id=...,group_id=..."
};

// In the order the kernel lists them: of two entries on one mount point, the
// later one is on top. Empty if the table cannot be read.
std::vector<MountEntry> read_mountinfo(const std::string& path = "/proc/self/mountinfo");

// Who made a FUSE mount: its user_id=, which the kernel records and the mounter
// cannot choose. nullopt for a mount without one (not FUSE: only root mounts those).
std::optional<uid_t> fuse_owner(const MountEntry& e);

// `path` is `dir` itself or lies beneath it (both absolute, normalized).
bool path_within(const std::string& path, const std::string& dir);

// The fuse.leasefs mount whose mount point is exactly `path`, if any (of several
// stacked there, the one on top).
std::optional<MountEntry> leasefs_mount_at(const std::string& path);

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mountinfo(const std::string& field);

}  // namespace leasefs::base

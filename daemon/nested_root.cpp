#include "daemon/nested_root.hpp"

#include "base/mountinfo.hpp"

namespace leasefs::daemon {

std::optional<std::string> nested_in_a_root(const std::string& path) {
  for (const base::MountEntry& e : base::read_mountinfo()) {
    if (e.fstype != "fuse.leasefs" || e.mount_point == path) continue;
    if (!base::path_within(path, e.mount_point)) continue;
    return path + " is inside " + e.mount_point +
           ", a leasefs root already: roots cannot nest. Gate the whole project with that "
           "daemon (narrow a grant with --path " +
           path.substr(e.mount_point.size() + 1) + "/**), or stop it first with `leasefs unmount " +
           e.mount_point + "`";
  }
  return std::nullopt;
}

}  // namespace leasefs::daemon

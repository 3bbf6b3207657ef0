#include "daemon/mount_table.hpp"

#include "base/spawn.hpp"

namespace leasefs::fuse {

std::optional<MountEntry> leasefs_mount_at(const std::string& path) {
  std::optional<MountEntry> found;
  for (auto& e : base::read_mountinfo()) {
    // The last one listed is the one on top.
    if (e.mount_point == path && e.fstype == "fuse.leasefs") found = e;
  }
  return found;
}

bool fusermount(const std::vector<std::string>& args, const std::string& path) {
  std::vector<std::string> argv = {"fusermount3"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(path);
  return base::run_argv(argv, {.timeout_s = 30}).ok();
}

}  // namespace leasefs::fuse

#include "fuse/takeover.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/mountinfo.hpp"

namespace leasefs::fuse {

bool dead_leasefs_mount(const std::string& path) {
  bool leasefs_on_top = false;
  for (const auto& e : base::read_mountinfo()) {
    if (e.mount_point == path) leasefs_on_top = e.fstype == "fuse.leasefs";  // last is on top
  }
  if (!leasefs_on_top) return false;
  // statfs always reaches the daemon (stat may be answered from the attr cache).
  struct statfs sfs {};
  return ::statfs(path.c_str(), &sfs) != 0 && errno == ENOTCONN;
}

base::UniqueFd open_beneath_mounts(const std::string& path, std::string* error) {
  const size_t slash = path.rfind('/');
  if (path.empty() || path[0] != '/' || slash == std::string::npos || slash + 1 == path.size()) {
    *error = path + ": not an absolute path to a directory";
    return {};
  }
  for (const auto& e : base::read_mountinfo()) {
    if (e.mount_point == path && e.fstype != "fuse.leasefs") {
      *error = path + " is the root of a " + e.fstype +
               " mount, which cannot be reached beneath the dead leasefs mount on it";
      return {};
    }
  }
  const std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = path.substr(slash + 1);
  // Not AT_RECURSIVE: the clone carries no submounts, so `name` is the raw directory.
  base::UniqueFd tree(::open_tree(AT_FDCWD, parent.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
  if (!tree) {
    *error = "cannot reach " + path + " beneath its mounts (open_tree " + parent +
             "): " + std::strerror(errno);
    return {};
  }
  base::UniqueFd dir(
      ::openat(tree.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) *error = "cannot open " + path + " beneath its mounts: " + std::strerror(errno);
  return dir;
}

base::UniqueFd mount_fuse_on_top(const std::string& mountpoint, const std::string& fsname,
                                 bool allow_other, unsigned long flags, std::string* error) {
  base::UniqueFd dev(::open("/dev/fuse", O_RDWR | O_CLOEXEC));
  if (!dev) {
    *error = std::string("cannot open /dev/fuse: ") + std::strerror(errno);
    return {};
  }
  // The kernel options libfuse's own mount passes; fsname and the type carry
  // "fuse.leasefs" so the mount table shows the same entry either way.
  std::string opts = "fd=" + std::to_string(dev.get()) +
                     ",rootmode=40000,user_id=" + std::to_string(::getuid()) +
                     ",group_id=" + std::to_string(::getgid()) + ",default_permissions";
  if (allow_other) opts += ",allow_other";
  if (::mount(fsname.c_str(), mountpoint.c_str(), "fuse.leasefs", flags, opts.c_str()) != 0) {
    *error = "cannot mount over " + mountpoint + ": " + std::strerror(errno);
    return {};
  }
  return dev;
}

}  // namespace leasefs::fuse

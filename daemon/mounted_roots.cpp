#include "daemon/mounted_roots.hpp"

#include <fcntl.h>

#include <cstdio>

#include "base/mountinfo.hpp"
#include "base/unique_fd.hpp"
#include "fuse/takeover.hpp"
#include "state/longrun_dir.hpp"

namespace leasefs::daemon {

bool check_existing_mount(const std::string& path, const std::string& root, bool* dead,
                          std::string* error) {
  if (!base::leasefs_mount_at(path)) return true;
  if (fuse::dead_leasefs_mount(path)) {
    std::fprintf(stderr,
                 "note: %s is a dead leasefs mount (its daemon ended); it keeps failing closed "
                 "until the new daemon is mounted on top of it\n",
                 path.c_str());
    *dead = true;
    return true;
  }
  pid_t pid = 0;
  base::UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (fd) pid = state::LongrunDir::lock_holder(fd.get());
  *error = root + " is already served by leasefs" +
           (pid > 0 ? " (pid " + std::to_string(pid) + ")" : std::string()) +
           "; stop it with `leasefs unmount " + path + "`";
  return false;
}

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

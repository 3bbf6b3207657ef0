#include "service/longrun_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/error.hpp"

namespace leasefs::gate {

namespace {
constexpr const char* kDirName = ".longrun";
constexpr const char* kLockName = "lock";

std::string errno_text(int err) {
  return std::strerror(err);
}
}  // namespace

LongrunDir::LongrunDir(int root_fd, std::string root_display) : root_(std::move(root_display)) {
  if (::mkdirat(root_fd, kDirName, 0700) != 0 && errno != EEXIST) {
    throw Error(Errc::kIoError, "cannot create " + root_ + "/.longrun: " + errno_text(errno));
  }
  dir_.reset(::openat(root_fd, kDirName, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!dir_) {
    throw Error(Errc::kIoError, "cannot open " + root_ + "/.longrun: " + errno_text(errno));
  }
  lock_.reset(::openat(dir_.get(), kLockName, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!lock_) {
    throw Error(Errc::kIoError, "cannot open " + root_ + "/.longrun/lock: " + errno_text(errno));
  }
  if (::flock(lock_.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK) {
      throw Error(Errc::kIoError, "cannot lock " + root_ + "/.longrun/lock: " + errno_text(err));
    }
    const pid_t holder = lock_holder(root_fd);
    throw Error(Errc::kRootLocked,
                root_ + " is already served by leasefs" +
                    (holder > 0 ? " (pid " + std::to_string(holder) + ")" : std::string()) +
                    "; stop it with `leasefs unmount " + root_ + "` first");
  }
  // Record the holder so that a refused second daemon can say who has the root.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_.get(), 0) != 0 ||
      ::pwrite(lock_.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    throw Error(Errc::kIoError, "cannot write " + root_ + "/.longrun/lock: " + errno_text(errno));
  }
}

std::string LongrunDir::path(std::string_view name) const {
  return "/proc/self/fd/" + std::to_string(dir_.get()) + "/" + std::string(name);
}

pid_t LongrunDir::lock_holder(int root_fd) {
  std::string rel = std::string(kDirName) + "/" + kLockName;
  base::UniqueFd fd(::openat(root_fd, rel.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return 0;
  char buf[32] = {};
  ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  return static_cast<pid_t>(std::strtol(buf, nullptr, 10));
}

bool LongrunDir::is_agent_readable(std::string_view name) {
  return name == "status.md" || name == "socket";
}

void LongrunDir::share_with(std::optional<gid_t> agent_gid) {
  const uid_t owner = ::geteuid();
  auto fail = [&](const std::string& what) {
    throw Error(Errc::kIoError, what + " " + root_ + "/.longrun: " + errno_text(errno));
  };
  if (!agent_gid) {
    if (::fchmod(dir_.get(), 0700) != 0) fail("cannot chmod");
    agent_gid_.reset();
    return;
  }
  // Entries first, the directory last: the agent's group gets in only once
  // everything inside is as it should be. A tree handed over with `chown -R` is
  // taken back here.
  base::UniqueFd list(::openat(dir_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* d = list ? ::fdopendir(list.get()) : nullptr;
  if (!d) fail("cannot list");
  (void)list.release();
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const bool readable = is_agent_readable(name);
    if (::fchownat(dir_.get(), name.c_str(), owner, readable ? *agent_gid : ::getegid(),
                   AT_SYMLINK_NOFOLLOW) != 0 ||
        (e->d_type != DT_LNK &&
         ::fchmodat(dir_.get(), name.c_str(), readable ? 0640 : 0600, 0) != 0)) {
      const int err = errno;
      ::closedir(d);
      errno = err;
      fail("cannot take back " + name + " in");
    }
  }
  ::closedir(d);
  if (::fchown(dir_.get(), owner, *agent_gid) != 0) fail("cannot chown");
  if (::fchmod(dir_.get(), 0710) != 0) fail("cannot chmod");
  agent_gid_ = agent_gid;
}

}  // namespace leasefs::gate

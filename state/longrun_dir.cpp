#include "state/longrun_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/error.hpp"

namespace leasefs::state {

namespace {
constexpr const char* kDirName = ".longrun";
constexpr const char* kLockName = "lock";

std::string errno_text(int err) {
  return std::strerror(err);
}

// Whether `pid` is a process that is not on its way out: the kernel releases a
// killed daemon's lock only when it closes the daemon's files, a moment after
// its mount already answers ENOTCONN.
bool lives(pid_t pid) {
  if (pid <= 0) return false;
  std::string stat;
  {
    base::UniqueFd fd(
        ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return false;
    char buf[1024];
    const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
    if (n <= 0) return false;
    stat.assign(buf, static_cast<size_t>(n));
  }
  // "pid (comm) state ppid pgrp session tty_nr tpgid flags ..."; comm may hold anything.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  const char state = stat[close + 2];
  if (state == 'Z' || state == 'X' || state == 'x') return false;
  unsigned long flags = 0;
  if (std::sscanf(stat.c_str() + close + 2, "%*c %*d %*d %*d %*d %*d %lu", &flags) != 1) {
    return true;
  }
  constexpr unsigned long kPfExiting = 0x4;  // PF_EXITING
  return (flags & kPfExiting) == 0;
}

// Takes the lock, waiting up to 5 s while its holder is a process on its way out.
bool take_lock(int lock_fd, int root_fd) {
  for (int waited_ms = 0;; waited_ms += 10) {
    if (::flock(lock_fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK) return false;
    if (waited_ms >= 5000 || lives(LongrunDir::lock_holder(root_fd))) {
      errno = EWOULDBLOCK;
      return false;
    }
    ::usleep(10'000);
  }
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
  if (!take_lock(lock_.get(), root_fd)) {
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
  return name == "status.md";
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

}  // namespace leasefs::state

#include "protocol/daemon_registry.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/make_dirs.hpp"
#include "base/unique_fd.hpp"

namespace leasefs::protocol {

namespace {

constexpr size_t kMaxEntryBytes = 64 * 1024;

bool writable_by_others(const struct stat& st) {
  return (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

// Every directory from / down to `dir`: no symlink, owned by root or `owner`,
// and writable by nobody else, unless it is root's and sticky (then only the
// owner of the next name may replace it, which the next step checks).
std::optional<std::string> untrusted_path(const std::string& dir, uid_t owner) {
  if (dir.empty() || dir[0] != '/') return dir + " is not an absolute path";
  std::string partial;
  size_t pos = 0;
  while (true) {
    const size_t slash = dir.find('/', pos + 1);
    partial = slash == std::string::npos ? dir : dir.substr(0, slash);
    if (partial.empty()) partial = "/";
    struct stat st {};
    if (::lstat(partial.c_str(), &st) != 0) return partial + ": " + std::strerror(errno);
    if (!S_ISDIR(st.st_mode)) return partial + " is not a directory";
    if (st.st_uid != 0 && st.st_uid != owner) {
      return partial + " belongs to uid " + std::to_string(st.st_uid);
    }
    if (writable_by_others(st) && !(st.st_uid == 0 && (st.st_mode & S_ISVTX))) {
      return partial + " is writable by others";
    }
    if (slash == std::string::npos || slash + 1 == dir.size()) return std::nullopt;
    pos = slash;
  }
}

bool alive(pid_t pid) {
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

std::optional<RegistryEntry> read_entry(int dir_fd, const char* name, uid_t owner) {
  base::UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0) return std::nullopt;
  if (!S_ISREG(st.st_mode) || st.st_uid != owner || writable_by_others(st) ||
      st.st_size > static_cast<off_t>(kMaxEntryBytes)) {
    return std::nullopt;
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  if (::pread(fd.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    return std::nullopt;
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  RegistryEntry e;
  try {
    e.pid = j.at("pid").get<pid_t>();
    e.owner = j.at("owner").get<uid_t>();
    e.mount_id = j.at("mount_id").get<int>();
    e.device = j.at("device").get<std::string>();
    e.mountpoint = j.at("mountpoint").get<std::string>();
    e.root = j.at("root").get<std::string>();
    e.socket = j.at("socket").get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  if (e.owner != owner) return std::nullopt;
  return e;
}

std::string entry_name(int mount_id) {
  return std::to_string(mount_id) + ".json";
}

bool is_entry_name(const std::string& name) {
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0 && name[0] != '.';
}

// Held while a daemon sweeps, writes or removes entries. Mount ids are reused as
// soon as a mount is gone, so a new daemon may rename its entry over a name that
// another daemon has just read as dead or as its own; under the lock the reading
// and the removing are one step. Only the registry's owner can open the file.
class RegistryLock {
 public:
  explicit RegistryLock(const std::string& dir) : path_(dir + "/.lock") {
    fd_.reset(::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    struct stat st {};
    if (!fd_ || ::fstat(fd_.get(), &st) != 0) {
      problem_ = "cannot open " + path_ + ": " + std::strerror(errno);
    } else if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
      problem_ = path_ + " is not a file of uid " + std::to_string(::geteuid());
    } else {
      while (::flock(fd_.get(), LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        problem_ = "cannot lock " + path_ + ": " + std::strerror(errno);
        break;
      }
    }
    if (!problem_.empty()) fd_.reset();
  }
  // Empty once the lock is held.
  const std::string& problem() const { return problem_; }

 private:
  std::string path_;
  std::string problem_;
  base::UniqueFd fd_;  // closing it lets the lock go
};

}  // namespace

std::string registry_dir(uid_t owner) {
  if (owner == 0) return "/run/leasefs/daemons";
  const char* xdg = ::getenv("XDG_RUNTIME_DIR");
  if (!xdg || *xdg != '/') return "";
  return std::string(xdg) + "/leasefs/daemons";
}

std::vector<RegistryEntry> read_registry(const std::string& dir, uid_t owner,
                                         std::string* why_not) {
  std::vector<RegistryEntry> out;
  if (auto why = untrusted_path(dir, owner)) {
    if (why_not) *why_not = *why;
    return out;
  }
  base::UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_fd) return out;
  DIR* d = ::fdopendir(::dup(dir_fd.get()));
  if (!d) return out;
  while (const dirent* de = ::readdir(d)) {
    if (!is_entry_name(de->d_name)) continue;
    auto e = read_entry(dir_fd.get(), de->d_name, owner);
    if (e && alive(e->pid)) out.push_back(std::move(*e));
  }
  ::closedir(d);
  return out;
}

std::string register_daemon(const std::string& dir, const RegistryEntry& e) {
  base::make_dirs_0755(dir, "the daemon registry");
  if (auto why = untrusted_path(dir, ::geteuid())) {
    throw Error(Errc::kIoError, "the daemon registry is not safe to use: " + *why);
  }
  const RegistryLock lock(dir);
  if (!lock.problem().empty()) throw Error(Errc::kIoError, lock.problem());
  // The entries of daemons that died without removing theirs.
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* de = ::readdir(d)) {
      if (!is_entry_name(de->d_name)) continue;
      auto old = read_entry(::dirfd(d), de->d_name, ::geteuid());
      if (old && !alive(old->pid)) ::unlinkat(::dirfd(d), de->d_name, 0);
    }
    ::closedir(d);
  }
  const nlohmann::json j = {
      {"pid", e.pid},       {"owner", e.owner},           {"mount_id", e.mount_id},
      {"device", e.device}, {"mountpoint", e.mountpoint}, {"root", e.root},
      {"socket", e.socket}};
  const std::string text = j.dump(2) + "\n";
  const std::string path = dir + "/" + entry_name(e.mount_id);
  const std::string tmp = dir + "/." + entry_name(e.mount_id) + "." + std::to_string(::getpid());
  base::UniqueFd fd(
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) throw_io_error("cannot write " + tmp, errno);
  if (::fchmod(fd.get(), 0644) != 0 ||
      ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw_io_error("cannot write " + tmp, err);
  }
  fd.reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw_io_error("cannot write " + path, err);
  }
  return path;
}

void unregister_daemon(const std::string& path) noexcept {
  if (path.empty()) return;
  const size_t slash = path.rfind('/');
  base::UniqueFd dir_fd(
      ::open(path.substr(0, slash).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_fd) return;
  const std::string name = path.substr(slash + 1);
  // Without the lock the entry stays: once this process is gone, readers skip it.
  const RegistryLock lock(path.substr(0, slash));
  if (!lock.problem().empty()) return;
  auto e = read_entry(dir_fd.get(), name.c_str(), ::geteuid());
  if (e && e->pid == ::getpid()) ::unlinkat(dir_fd.get(), name.c_str(), 0);
}

}  // namespace leasefs::protocol

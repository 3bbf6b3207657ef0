#include "fuse/filesystem.hpp"

#include <fcntl.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace leasefs::fuse {

namespace {

struct stat stat_fd(int fd) {
  struct stat st {};
  if (::fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    throw std::system_error(errno, std::generic_category(), "fstat root");
  }
  return st;
}

UniqueFd dup_path_fd(int fd) {
  UniqueFd out(::openat(fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!out) throw std::system_error(errno, std::generic_category(), "reopen root");
  return out;
}

// Target of /proc/self/fd/N, or "" on failure.
std::string fd_target(int fd) {
  char buf[PATH_MAX + 1];
  std::string link = Filesystem::fd_path(fd);
  ssize_t n = ::readlink(link.c_str(), buf, PATH_MAX);
  if (n <= 0) return {};
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

Filesystem::Filesystem(int root_fd, gate::Gate& gate, FsOptions options)
    : gate_(gate),
      options_(options),
      root_(dup_path_fd(root_fd), stat_fd(root_fd), false),
      root_prefix_(fd_target(root_.fd.get())),
      cache_(std::make_unique<FdCache>(root_.fd.get(), root_.dev, fd_budget(),
                                       options.fd_cache_capacity)),
      table_(cache_.get()) {
  if (root_prefix_.empty() || root_prefix_[0] != '/') {
    throw std::runtime_error("cannot resolve the root's path through /proc/self/fd");
  }
}

uint64_t Filesystem::adopt(std::unique_ptr<FileHandle> handle) {
  const FileHandle* key = handle.get();
  std::lock_guard lock(handles_mu_);
  handles_.emplace(key, std::move(handle));
  return reinterpret_cast<uint64_t>(key);
}

std::unique_ptr<FileHandle> Filesystem::disown(uint64_t fh) {
  std::lock_guard lock(handles_mu_);
  auto it = handles_.find(reinterpret_cast<const FileHandle*>(fh));
  if (it == handles_.end()) return nullptr;
  std::unique_ptr<FileHandle> handle = std::move(it->second);
  handles_.erase(it);
  return handle;
}

int Filesystem::lookup(Inode& parent, const char* name, fuse_entry_param* e) {
  *e = fuse_entry_param{};
  const bool is_protected = child_protected(parent, name);
  e->attr_timeout = e->entry_timeout = timeout_for(is_protected);
  UniqueFd fd(::openat(parent.fd.get(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return -errno;
  if (::fstatat(fd.get(), "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return -errno;
  Inode* inode = table_.acquire(std::move(fd), e->attr, is_protected);
  e->ino = reinterpret_cast<fuse_ino_t>(inode);
  return 0;
}

std::string Filesystem::path_of(const Inode& inode) const {
  if (&inode == &root_) return {};
  std::string target = fd_target(inode.fd.get());
  // /proc marks an unlinked file with " (deleted)", but a live file may also be
  // *named* "z.c (deleted)": stripping the suffix from it would let a grant for
  // `src/*.c` cover it. Strip only when the file really has no names left.
  constexpr std::string_view kDeleted = " (deleted)";
  if (target.ends_with(kDeleted)) {
    struct stat st {};
    if (::fstatat(inode.fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 &&
        st.st_nlink == 0) {
      target.resize(target.size() - kDeleted.size());
    }
  }
  const std::string& prefix = root_prefix_;
  if (prefix == "/") {
    if (target.size() > 1 && target[0] == '/') return target.substr(1);
    return "?";
  }
  if (target.size() > prefix.size() + 1 && target.compare(0, prefix.size(), prefix) == 0 &&
      target[prefix.size()] == '/') {
    return target.substr(prefix.size() + 1);
  }
  if (target == prefix) return {};
  return "?";
}

std::string Filesystem::path_of(const Inode& parent, std::string_view name) const {
  std::string path = path_of(parent);
  if (path == "?") return path;
  if (!path.empty()) path += '/';
  path += name;
  return path;
}

int Filesystem::check(gate::Op op, bool is_protected, const Inode& base, std::string_view name,
                      const gate::Caller& caller, std::string* grant_id) {
  auto resolve = [&] { return name.empty() ? path_of(base) : path_of(base, name); };
  std::string path;
  bool resolved = false;
  if (is_protected || gate_.needs_path()) {
    path = resolve();
    resolved = true;
  }
  // A protected object whose path cannot be read still goes to the gate as .longrun.
  std::string_view asked = path;
  if (is_protected && !gate::is_protected_path(path)) asked = ".longrun";
  gate::Verdict v = gate_.check(op, asked, caller);
  if (!v.allowed && !resolved) {
    // Refusals are reported with the real path; asking again with it also closes
    // the window where a path-narrowed grant was published after needs_path().
    path = resolve();
    v = gate_.check(op, path, caller);
  }
  if (!v.allowed) {
    gate_.report_refusal(op, path, caller, v.reason);
    SPDLOG_DEBUG("refused {} {} pid {}: {}", gate::op_name(op), path, caller.pid,
                 gate::to_string(v.reason));
    return -EACCES;
  }
  if (grant_id) *grant_id = std::move(v.grant_id);
  return 0;
}

int Filesystem::gate_inode(gate::Op op, const Inode& inode, const gate::Caller& caller,
                           std::string* grant_id) {
  return check(op, inode.protected_path.load(std::memory_order_relaxed), inode, {}, caller,
               grant_id);
}

int Filesystem::gate_entry(gate::Op op, const Inode& parent, std::string_view name,
                           const gate::Caller& caller) {
  return check(op, child_protected(parent, name), parent, name, caller, nullptr);
}

int Filesystem::gate_path(gate::Op op, std::string_view path, const gate::Caller& caller,
                          std::string* grant_id) {
  gate::Verdict v = gate_.check(op, path, caller);
  if (!v.allowed) {
    gate_.report_refusal(op, path, caller, v.reason);
    return -EACCES;
  }
  if (grant_id) *grant_id = std::move(v.grant_id);
  return 0;
}

namespace {

// Each worker thread gets its own fs_struct with umask 0 the first time it
// creates something: the kernel sends modes with the caller's umask applied.
void private_umask_once() noexcept {
  thread_local bool done = false;
  if (done) return;
  done = true;
  if (::unshare(CLONE_FS) == 0) ::umask(0);
}

}  // namespace

ActAsCaller::ActAsCaller(const gate::Caller& caller) noexcept {
  private_umask_once();
  static const bool is_root = ::geteuid() == 0;
  if (!is_root || (caller.uid == 0 && caller.gid == 0)) return;
  ::syscall(SYS_setfsgid, caller.gid);
  ::syscall(SYS_setfsuid, caller.uid);
  switched_ = true;
}

ActAsCaller::~ActAsCaller() {
  if (!switched_) return;
  ::syscall(SYS_setfsuid, 0);
  ::syscall(SYS_setfsgid, 0);
}

void log_stray_exception(const char* op, const char* what) noexcept {
  try {
    spdlog::error("{}: unexpected exception, answered EIO: {}", op, what);
  } catch (...) {
  }
}

}  // namespace leasefs::fuse

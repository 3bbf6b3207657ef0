#include "fuse/filesystem.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "base/beneath.hpp"
#include "base/clock.hpp"
#include "base/open_by_handle.hpp"

namespace leasefs::fuse {

namespace {

struct stat stat_fd(int fd) {
  struct stat st {};
  if (::fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    throw std::system_error(errno, std::generic_category(), "fstat root");
  }
  return st;
}

base::UniqueFd dup_path_fd(int fd) {
  base::UniqueFd out(::openat(fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!out) throw std::system_error(errno, std::generic_category(), "reopen root");
  return out;
}

// Target of /proc/self/fd/N, or "" on failure (a path too long for PATH_MAX
// fails with ENAMETOOLONG, or would come back truncated: never use a cut path).
std::string fd_target(int fd) {
  char buf[PATH_MAX + 1];
  std::string link = Filesystem::fd_path(fd);
  ssize_t n = ::readlink(link.c_str(), buf, PATH_MAX);
  if (n <= 0 || n >= PATH_MAX) return {};
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

Filesystem::Filesystem(int root_fd, gate::Gate& gate, report::Reporter& reporter, FsOptions options)
    : gate_(gate),
      reporter_(reporter),
      options_(options),
      root_(dup_path_fd(root_fd), stat_fd(root_fd), false),
      root_prefix_(fd_target(root_.fd.get())),
      cache_(std::make_unique<FdCache>(root_.fd.get(), root_.dev, fd_budget(),
                                       options.fd_cache_capacity)),
      table_(cache_.get()),
      longrun_(root_.fd.get(), options_.stable_names),
      parked_(options.ask_bound) {
  if (root_prefix_.empty() || root_prefix_[0] != '/') {
    throw std::runtime_error("cannot resolve the root's path through /proc/self/fd");
  }
  gate_.set_publish_listener(this);
}

Filesystem::~Filesystem() {
  gate_.set_publish_listener(nullptr);
}

std::optional<TempSibling> Filesystem::temp_sibling_at(const Inode& dir, const char* name) const {
  if (siblings_.empty()) return std::nullopt;
  struct stat st {};
  if (::fstatat(dir.fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return siblings_.find(st.st_dev, st.st_ino);
}

void Filesystem::on_publishing() noexcept {
  try {
    std::vector<fuse_ino_t> inos;
    {
      std::lock_guard lock(handles_mu_);
      for (const auto& [key, handle] : handles_) {
        if (handle->writable && handle->inode) inos.push_back(node_id(handle->inode));
      }
    }
    std::sort(inos.begin(), inos.end());
    inos.erase(std::unique(inos.begin(), inos.end()), inos.end());
    pages_.now(inos);
  } catch (...) {
    // Best effort: the gate still refuses every later writeback without a lease.
  }
}

void Filesystem::on_published(const gate::GateSnapshot& snapshot) noexcept {
  parked_.on_published(snapshot);
  if (siblings_.empty()) return;
  try {
    const bool open = gate::temp_sibling_turn_open(snapshot, snapshot.turn, base::now_ms());
    for (const TempSibling& s :
         siblings_.close_except(open ? std::optional<uint64_t>(snapshot.turn) : std::nullopt)) {
      take_leftover(s);
    }
  } catch (...) {
    // Taking leftovers out must not fail a publication.
  }
}

uint64_t Filesystem::adopt(std::unique_ptr<FileHandle> handle) {
  const FileHandle* key = handle.get();
  std::lock_guard lock(handles_mu_);
  handles_.emplace(key, std::move(handle));
  return reinterpret_cast<uint64_t>(key);
}

std::unique_ptr<FileHandle> Filesystem::disown(fuse_req_t req, uint64_t fh) {
  std::unique_ptr<FileHandle> handle;
  {
    std::lock_guard lock(handles_mu_);
    auto it = handles_.find(reinterpret_cast<const FileHandle*>(fh));
    if (it == handles_.end()) return nullptr;
    handle = std::move(it->second);
    handles_.erase(it);
  }
  io_modes_.closed(req, handle->inode, handle->io_mode);
  return handle;
}

int Filesystem::lookup(Inode& parent, const char* name, fuse_entry_param* e) {
  *e = fuse_entry_param{};
  bool is_protected = child_protected(parent, name);
  base::UniqueFd fd(::openat(parent.fd.get(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return -errno;
  if (::fstatat(fd.get(), "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return -errno;
  // The same object under another name (hard link, bind mount, case variant).
  if (!is_protected && longrun_.protects(e->attr)) is_protected = true;
  if (S_ISREG(e->attr.st_mode) && e->attr.st_nlink > 1) {
    if (std::string path = path_of(parent, name); gate::is_expressible(path)) {
      link_names_.remember(e->attr.st_dev, e->attr.st_ino, std::move(path));
    }
  }
  e->attr_timeout = e->entry_timeout = timeout_for(is_protected);
  Inode* inode = table_.acquire(std::move(fd), e->attr, is_protected);
  e->ino = reinterpret_cast<fuse_ino_t>(inode);
  return 0;
}

std::string Filesystem::path_of(const Inode& inode) const {
  if (&inode == &root_) return {};
  std::string target = fd_target(inode.fd.get());
  const std::string unresolved(gate::kUnresolvedPath);
  // /proc marks a name that is gone with " (deleted)", but a live file may also be
  // *named* "z.c (deleted)": stripping the suffix from it would let a grant for
  // `src/*.c` cover it. Strip only when the file really has no names left. When
  // the name is gone but the file lives on under another one (a hard link made
  // before the unlink: `ln src/a.c .git/hooks/x; rm src/a.c`), the gone name is
  // not where the file is: the path is one of its live names, or unresolved.
  constexpr std::string_view kDeleted = " (deleted)";
  struct stat st {};
  if (target.ends_with(kDeleted)) {
    if (::fstatat(inode.fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
      return unresolved;
    }
    if (st.st_nlink == 0) {
      target.resize(target.size() - kDeleted.size());
    } else {
      std::string path = relative_to_root(target);
      if (names_this_file(path, st)) return path;  // a live file named "… (deleted)"
      const std::string gone = std::move(path);
      path = live_name_of(inode.fd.get());
      if (names_this_file(path, st)) return path;
      // The handle led back to the gone name (the kernel keeps it as an alias
      // while we hold it): look for another name beside it (`ln b a; sed -i a`).
      path = name_beside(gone, st);
      if (names_this_file(path, st)) return path;
      // Or the name it was last reached by, in another directory (link_names.hpp).
      path = link_names_.last(st.st_dev, st.st_ino).value_or(std::string());
      return names_this_file(path, st) ? path : unresolved;
    }
  }
  return relative_to_root(target);
}

std::string Filesystem::relative_to_root(const std::string& target) const {
  const std::string& prefix = root_prefix_;
  if (prefix == "/") {
    if (target.size() > 1 && target[0] == '/') return target.substr(1);
  } else if (target.size() > prefix.size() + 1 && target.compare(0, prefix.size(), prefix) == 0 &&
             target[prefix.size()] == '/') {
    return target.substr(prefix.size() + 1);
  } else if (target == prefix) {
    return {};
  }
  return std::string(gate::kUnresolvedPath);
}

bool Filesystem::names_this_file(const std::string& path, const struct stat& st) const {
  if (path.empty() || !gate::is_expressible(path)) return false;
  std::string name;
  base::UniqueFd dir = base::open_parent(root_.fd.get(), path, &name);
  struct stat live {};
  return dir && ::fstatat(dir.get(), name.c_str(), &live, AT_SYMLINK_NOFOLLOW) == 0 &&
         live.st_dev == st.st_dev && live.st_ino == st.st_ino;
}

std::string Filesystem::live_name_of(int fd) const {
  // Reopened from its file handle, the file comes back through a name it still has.
  alignas(struct file_handle) unsigned char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
  auto* fh = reinterpret_cast<struct file_handle*>(buf);
  fh->handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  if (::name_to_handle_at(fd, "", fh, &mount_id, AT_EMPTY_PATH) != 0) return {};
  // (open_by_handle_at wants a mount fd that is not O_PATH.)
  base::UniqueFd mount_fd(::openat(root_.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!mount_fd) return {};
  base::UniqueFd again = base::open_by_handle(mount_fd.get(), fh, O_PATH | O_CLOEXEC);
  if (!again) return {};
  std::string target = fd_target(again.get());
  if (target.ends_with(" (deleted)")) return {};
  return relative_to_root(target);
}

std::string Filesystem::name_beside(const std::string& gone, const struct stat& st) const {
  if (gone.empty() || !gate::is_expressible(gone)) return {};
  std::string name;
  base::UniqueFd parent = base::open_parent(root_.fd.get(), gone, &name);
  if (!parent) return {};
  base::UniqueFd dir_fd(::openat(parent.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* dir = dir_fd ? ::fdopendir(dir_fd.get()) : nullptr;
  if (!dir) return {};
  (void)dir_fd.release();  // the DIR owns it now
  std::string found;
  constexpr size_t kMaxEntries = 65536;  // beyond this, the path stays unresolved
  size_t seen = 0;
  while (struct dirent* e = ::readdir(dir)) {
    if (++seen > kMaxEntries) break;
    if (e->d_ino != st.st_ino || name == e->d_name) continue;
    const size_t slash = gone.rfind('/');
    found = (slash == std::string::npos ? std::string() : gone.substr(0, slash + 1)) + e->d_name;
    break;
  }
  ::closedir(dir);
  return found;
}

std::string Filesystem::cached_path_of(const Inode& inode, CachedPath* where) const {
  if (!options_.stable_names || &inode == &root_) return path_of(inode);
  // The generation is read before the path (path_cache.hpp has the argument).
  const bool dir = S_ISDIR(inode.type);
  const uint64_t gen = dir ? names_.dirs() : names_.now();
  if (where) {
    if (std::optional<std::string> hit = where->at(gen)) return std::move(*hit);
  }
  std::optional<std::string> hit = inode_paths_.at(inode.dev, inode.ino, dir, gen);
  std::string path = hit ? std::move(*hit) : path_of(inode);
  // Only a full path is kept: an unresolved one may be a passing failure.
  if (!hit && gate::is_expressible(path)) inode_paths_.store(inode.dev, inode.ino, dir, gen, path);
  if (where && gate::is_expressible(path)) where->store(gen, path);
  return path;
}

void Filesystem::remember_path(const Inode& inode, uint64_t gen, std::string path) const {
  if (options_.stable_names && !S_ISDIR(inode.type) && gate::is_expressible(path)) {
    inode_paths_.store(inode.dev, inode.ino, false, gen, std::move(path));
  }
}

std::string Filesystem::path_of(const Inode& parent, std::string_view name) const {
  std::string path = cached_path_of(parent);
  if (!gate::is_expressible(path)) return path;
  if (!path.empty()) path += '/';
  path += name;
  if (!gate::is_expressible(path)) return std::string(gate::kUnresolvedPath);
  return path;
}

std::string Filesystem::gate_path_of(const Inode& base, std::string_view name,
                                     bool is_protected) const {
  // A protected object always resolves afresh (as in check()).
  std::string path = !name.empty()  ? path_of(base, name)
                     : is_protected ? path_of(base)
                                    : cached_path_of(base);
  // A protected object whose path cannot be read still goes to the gate as .longrun.
  if (is_protected && !gate::is_protected_path(path)) path = ".longrun";
  return path;
}

int Filesystem::check(gate::Op op, bool is_protected, const Inode& base, std::string_view name,
                      const gate::Caller& caller, std::string* grant_id, CachedPath* where,
                      bool append) {
  auto resolve = [&] {
    if (!name.empty()) return path_of(base, name);
    // A protected object is refused whatever the lease: it always resolves afresh.
    return is_protected ? path_of(base) : cached_path_of(base, where);
  };
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
  if (!v.allowed && !siblings_.empty() && !is_protected) {
    // A temporary sibling of this turn may be written, re-moded and unlinked.
    std::optional<TempSibling> sibling = name.empty()
                                             ? siblings_.find(base.dev, base.ino)
                                             : temp_sibling_at(base, std::string(name).c_str());
    if (sibling) {
      gate::Verdict sv = gate_.check_on_temp_sibling(op, sibling->turn, caller);
      if (sv.allowed) v = std::move(sv);
    }
  }
  if (!v.allowed) {
    refuse(op, path, caller, v.reason);
    SPDLOG_DEBUG("refused {} {} pid {}: {}", gate::op_name(op), path, caller.pid,
                 gate::to_string(v.reason));
    return -EACCES;
  }
  if (int r = room_for(op); r < 0) return r;
  if (journal_) {
    // An entry's path is resolved once, for the journal and the report alike.
    if (!name.empty() && !resolved) {
      path = resolve();
      resolved = true;
    }
    if (int r = name.empty() ? journal_inode(base, append) : journal_path(path); r < 0) return r;
  }
  if (op != gate::Op::kWrite) report_allowed(op, resolved ? path : resolve(), caller, v.grant_id);
  if (grant_id) *grant_id = std::move(v.grant_id);
  return 0;
}

int Filesystem::room_for(gate::Op op) const noexcept {
  if (!reserve_ || !reserve_->full()) return 0;
  switch (op) {
    case gate::Op::kWrite:
    case gate::Op::kCreate:
    case gate::Op::kMknod:
    case gate::Op::kMkdir:
    case gate::Op::kSymlink:
    case gate::Op::kLink:
    case gate::Op::kSetxattr:
    case gate::Op::kFallocate:
    case gate::Op::kCopyFileRange:
      return -ENOSPC;
    default:
      return 0;  // frees space, or takes none worth keeping from the reserve
  }
}

void note_no_space(fuse_req_t req) noexcept {
  Filesystem& fs = Filesystem::of(req);
  fs.note_name_dropped();  // the reserve's sweep at once looks at every cached fd
  if (base::DiskReserve* reserve = fs.disk_reserve()) reserve->no_space();
}

int Filesystem::remove_name(Inode& dir, const std::string& name, int flags) noexcept {
  {
    // Cached paths (path_cache.hpp): unlinkat without AT_REMOVEDIR never removes a directory.
    NamesChanging changing(names(), (flags & AT_REMOVEDIR) != 0 ? NamesChanging::Reach::kDirectories
                                                                : NamesChanging::Reach::kFiles);
    if (::unlinkat(dir.fd.get(), name.c_str(), flags) != 0) return -errno;
  }
  note_name_dropped();
  return 0;
}

size_t Filesystem::release_deleted() noexcept {
  // Read before the sweep: a name dropped while it runs is looked for next time.
  const uint64_t dropped = dropped_.load(std::memory_order_acquire);
  if (dropped == swept_at_ && !(reserve_ && reserve_->full())) return 0;
  swept_at_ = dropped;
  return cache_->release_deleted();
}

void Filesystem::refuse(gate::Op op, std::string_view path, const gate::Caller& caller,
                        gate::DenyReason reason) {
  refuse(op, path, caller, reason, {op, reason, {std::string(path)}, {}, {}});
}

void Filesystem::refuse(gate::Op op, std::string_view path, const gate::Caller& caller,
                        gate::DenyReason reason, NotedRefusal ask) {
  // No grant could allow what is not grantable: nothing to ask a person for.
  if (!RefusalNote::active() || !gate::grantable(op)) {
    reporter_.refusal(op, path, caller, reason);
    return;
  }
  // Reported when the operation fails, with the time and turn of now.
  ask.report = [&reporter = reporter_, op, path = std::string(path), caller, reason,
                at_ms = base::now_ms(), turn = gate_.snapshot()->turn] {
    reporter.refusal(op, path, caller, reason, at_ms, turn);
  };
  ask.reason = reason;  // ask.op is the operation asked for (a rename, not its unlink)
  RefusalNote::record(std::move(ask));
}

bool Filesystem::park(fuse_req_t req, NotedRefusal& noted, ParkedRequests::Attempt attempt,
                      bool wait) {
  auto snapshot = gate_.snapshot();
  return parked_.park(req, *snapshot, noted, caller(req), std::move(attempt), wait,
                      !transport_.interrupts_reach(req));
}

void Filesystem::report_allowed(gate::Op op, std::string path, const gate::Caller& caller,
                                std::string grant_id, std::string target) noexcept {
  reporter_.allowed({op, std::move(path), std::move(target), caller, std::move(grant_id), 1});
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
                          std::string* grant_id, bool append) {
  gate::Verdict v = gate_.check(op, path, caller);
  if (!v.allowed) {
    refuse(op, path, caller, v.reason);
    return -EACCES;
  }
  if (int r = journal_path(path, append); r < 0) return r;
  report_allowed(op, std::string(path), caller, v.grant_id);
  if (grant_id) *grant_id = std::move(v.grant_id);
  return 0;
}

namespace {

// Each worker thread gets its own fs_struct the first time it creates something,
// so that setting its umask affects no other thread.
bool private_fs_once() noexcept {
  thread_local int state = 0;  // 0 unknown, 1 private, -1 shared (unshare failed)
  if (state == 0) state = ::unshare(CLONE_FS) == 0 ? 1 : -1;
  return state == 1;
}

}  // namespace

ActAsCaller::ActAsCaller(const gate::Caller& caller, mode_t umask) noexcept {
  // Only this code sets a worker's own umask: a call for the one it has is skipped.
  thread_local mode_t current = ~mode_t{0};
  if ((umask & 0777) != current && private_fs_once()) {
    ::umask(umask & 0777);
    current = umask & 0777;
  }
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

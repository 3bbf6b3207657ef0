// The passthrough's shared state: the root, the inode table, the gate, and the
// helpers every operation uses (gating, path resolution, caller identity).
//
// Gating. Each mutating operation asks the gate before touching the tree. The
// gate wants a path relative to the root, but resolving one costs a readlink of
// /proc/self/fd/N, so a path is resolved only when it can change the answer: when
// the snapshot has path-narrowed grants (Gate::needs_path), when the object is
// under .longrun (protected, which the gate refuses whatever the lease, I5), and
// when reporting a refusal. Otherwise the gate gets "" and decides on the lease
// alone.
#pragma once

#include <fuse_lowlevel.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include "base/disk_reserve.hpp"
#include "fuse/inode.hpp"
#include "fuse/inode_path_cache.hpp"
#include "fuse/io_modes.hpp"
#include "fuse/link_names.hpp"
#include "fuse/lock_waits.hpp"
#include "fuse/longrun_identity.hpp"
#include "fuse/page_invalidator.hpp"
#include "fuse/parked_requests.hpp"
#include "fuse/path_cache.hpp"
#include "fuse/refusal_note.hpp"
#include "fuse/reply.hpp"
#include "fuse/temp_siblings.hpp"
#include "fuse/transport.hpp"
#include "gate/gate.hpp"
#include "report/reporter.hpp"

namespace leasefs::journal {
class Journal;
}

namespace leasefs::fuse {

struct FsOptions {
  // Entry/attr timeout for everything outside .longrun. Long is safe when the
  // mount covers the root: nothing else changes the tree underneath.
  double timeout = 86400.0;
  // Answer every getxattr with ENOSYS (turns xattrs off in the kernel). Only for
  // measuring the cost of security.capability lookups; never the default.
  bool xattr_enosys = false;
  // Inode descriptors kept open at most (see inode_fd.hpp).
  size_t fd_cache_capacity = FdCache::kDefaultCapacity;
  // Ask mode: requests parked at most at once (parked_requests.hpp); past it a
  // refused mutation fails at once.
  size_t ask_bound = ParkedRequests::kDefaultBound;
  // Names in the tree change only through this filesystem and the daemon's own
  // undo: the mount covers the root and no process was left inside. Then the
  // path a write through an open file is judged by is cached (path_cache.hpp);
  // otherwise it is resolved on every write.
  bool stable_names = false;
  // Kernel passthrough for read-only opens (io_modes.hpp), where libfuse, the
  // kernel and root allow it.
  bool passthrough_reads = false;
};

// One open file. fh in fuse_file_info is its address.
struct FileHandle {
  BudgetSlot slot;  // counts `fd` against the descriptor budget
  base::UniqueFd fd;
  Inode* inode = nullptr;
  bool writable = false;
  // Opened O_APPEND without O_TRUNC: the daemon's own descriptor appends
  // whatever the offset asked, so a write through it leaves the bytes already
  // there alone (the journal keeps only the length: Entry::appended).
  bool append = false;
  std::string path;      // relative to the root as opened (writable handles); for the
                         // audit only, gating asks where the file is now (gate_handle)
  std::string grant_id;  // grant in force at open
  gate::Caller opener;
  std::atomic<uint64_t> bytes_written{0};
  CachedPath where;                     // where the file is now, for gate_handle (path_cache.hpp)
  IoMode io_mode = IoMode::kUntracked;  // how the kernel reads it (io_modes.hpp)
};

class Filesystem final : public gate::PublishListener {
 public:
  // `root_fd` reaches the backing tree (opened before any mount over it); it is
  // duplicated, the caller keeps its own. Refusals, allowed mutations and closed
  // files go to `reporter`.
  Filesystem(int root_fd, gate::Gate& gate, report::Reporter& reporter, FsOptions options = {});
  ~Filesystem() override;
  Filesystem(const Filesystem&) = delete;
  Filesystem& operator=(const Filesystem&) = delete;

  static Filesystem& of(fuse_req_t req) {
    return *static_cast<Filesystem*>(fuse_req_userdata(req));
  }

  Inode& inode(fuse_ino_t ino) noexcept {
    return ino == FUSE_ROOT_ID ? root_ : *reinterpret_cast<Inode*>(ino);
  }
  fuse_ino_t node_id(Inode* inode) noexcept {
    return inode == &root_ ? FUSE_ROOT_ID : reinterpret_cast<fuse_ino_t>(inode);
  }
  bool is_root(const Inode& inode) const noexcept { return &inode == &root_; }
  InodeTable& table() noexcept { return table_; }
  TempSiblings& temp_siblings() noexcept { return siblings_; }
  // The temporary sibling that `name` in `dir` is, if it is one.
  std::optional<TempSibling> temp_sibling_at(const Inode& dir, const char* name) const;

  // End of a lease (gate/temp_sibling.hpp): temporary siblings whose lease is
  // gone stop being siblings, and the ones still in the tree are taken out of it
  // and reported (take_leftover).
  void on_published(const gate::GateSnapshot& snapshot) noexcept override;
  // Before a publication: flush and drop the cached pages of every inode open for
  // writing, so what a shared mapping dirtied is judged by the snapshot it was
  // dirtied under (page_invalidator.hpp).
  void on_publishing() noexcept override;

  // The session whose kernel caches the filesystem may invalidate; nullptr detaches.
  void attach_session(fuse_session* session) { pages_.attach(session); }
  PageInvalidator& pages() noexcept { return pages_; }

  const InodeTable& table() const noexcept { return table_; }
  const FdCache& fd_cache() const noexcept { return *cache_; }
  gate::Gate& gate() noexcept { return gate_; }
  report::Reporter& reporter() noexcept { return reporter_; }
  const FsOptions& options() const noexcept { return options_; }
  // Whether the kernel takes an ENOSYS to OPENDIR as "directories need no
  // open" (set at init, before any request).
  bool no_opendir() const noexcept { return no_opendir_; }
  void set_no_opendir(bool on) noexcept { no_opendir_ = on; }
  // Which transport serves requests (transport.hpp); every request passes here.
  TransportInUse& transport() noexcept { return transport_; }
  const TransportInUse& transport() const noexcept { return transport_; }

  // Whether `name` in `parent` is (or would be) under .longrun.
  bool child_protected(const Inode& parent, std::string_view name) const noexcept {
    return parent.protected_path.load(std::memory_order_relaxed) ||
           (&parent == &root_ && name == ".longrun");
  }
  double timeout_for(bool is_protected) const noexcept {
    return is_protected ? 0.0 : options_.timeout;
  }

  // Looks `name` up under `parent`, filling `e` and taking one lookup reference.
  // Returns 0 or -errno.
  int lookup(Inode& parent, const char* name, fuse_entry_param* e);

  // Path of `inode` relative to the root ("" for the root); gate::kUnresolvedPath
  // when it cannot be expressed in full (the file is gone, lies outside the root,
  // or its path is PATH_MAX or longer), which only an unscoped grant covers.
  std::string path_of(const Inode& inode) const;
  std::string path_of(const Inode& parent, std::string_view name) const;
  // The path the gate is asked about: path_of, except that a protected object
  // (`is_protected`) always reaches the gate as under .longrun.
  std::string gate_path_of(const Inode& base, std::string_view name, bool is_protected) const;
  // Tells the path cache (inode_path_cache.hpp) where a file just made is:
  // `path`, as resolved after every name's generation was `gen` (names().now()).
  void remember_path(const Inode& inode, uint64_t gen, std::string path) const;

  // Gate checks: 0 when allowed, -EACCES (after reporting the refusal) otherwise.
  int gate_inode(gate::Op op, const Inode& inode, const gate::Caller& caller,
                 std::string* grant_id = nullptr);
  int gate_entry(gate::Op op, const Inode& parent, std::string_view name,
                 const gate::Caller& caller);
  // `append`: an open that can only append (FileHandle::append).
  int gate_path(gate::Op op, std::string_view path, const gate::Caller& caller,
                std::string* grant_id = nullptr, bool append = false);
  // A mutation through an open handle (write, fallocate, copy_file_range target,
  // ftruncate/fchmod/futimens) is judged by where the file is *now*, not by the
  // name it was opened under: a descriptor opened in one turn whose file was then
  // renamed must not write `src/moved` under a later grant for `docs/**` because
  // it was opened as `docs/x`. The path is needed only when some grant is
  // path-narrowed, and then comes from the handle's cache while no name changed
  // (path_cache.hpp, FsOptions::stable_names), else from a readlink.
  // Tells the reporter (the audit) of a mutation the gate allowed; `path` relative
  // to the root. Writes through an open file are not told one by one (kWrite is
  // skipped): the file's close is.
  void report_allowed(gate::Op op, std::string path, const gate::Caller& caller,
                      std::string grant_id, std::string target = {}) noexcept;

  // A refusal: reported (report/reporter.hpp), and noted for ask mode (refusal_note.hpp) with
  // what a grant would have to name (`ask`, whose op is the operation asked for;
  // by default `op` on `path` alone).
  void refuse(gate::Op op, std::string_view path, const gate::Caller& caller,
              gate::DenyReason reason);
  void refuse(gate::Op op, std::string_view path, const gate::Caller& caller,
              gate::DenyReason reason, NotedRefusal ask);

  // Ask mode (parked_requests.hpp). Before mounting: where asks go.
  void attach_asks(gate::AskChannel* channel) { parked_.attach(channel); }
  ParkedRequests& parked() noexcept { return parked_; }
  // Workers waiting in flock() for a process (lock_waits.hpp).
  LockWaits& lock_waits() noexcept { return lock_waits_; }
  // Parks `req` after the refusal `noted` of `caller`; false when it must fail now.
  // Parked, it takes the refusal's report, made only if the wait fails it.
  bool park(fuse_req_t req, NotedRefusal& noted, ParkedRequests::Attempt attempt, bool wait);

  // A mutation through an open handle (write, fallocate, ...): judged where the
  // file is now, by the handle's cached path while no name changed.
  int gate_handle(gate::Op op, FileHandle& handle, const gate::Caller& caller) {
    const Inode& inode = *handle.inode;
    // A write through a handle that can only append keeps the bytes already there.
    return check(op, inode.protected_path.load(std::memory_order_relaxed), inode, {}, caller,
                 nullptr, &handle.where, op == gate::Op::kWrite && handle.append);
  }

  // Held across every change to existing names (path_cache.hpp).
  NamesGeneration& names() noexcept { return names_; }

  // The disk's reserve (base/disk_reserve.hpp), if any; set before mounting.
  // While the disk is full, what would take space is refused with ENOSPC
  // (room_for), and every ENOSPC met is told to the reserve (note_no_space).
  void set_disk_reserve(base::DiskReserve* reserve) noexcept { reserve_ = reserve; }
  base::DiskReserve* disk_reserve() noexcept { return reserve_; }
  // 0, or -ENOSPC when the disk is full and `op` would take space.
  int room_for(gate::Op op) const noexcept;
  // Lets go of deleted files the inode cache still held (FdCache::release_deleted).
  // The sweep fstat's every cached fd, so it runs only when a name may have
  // been dropped since the last one (note_name_dropped), or while the disk is
  // full, when files removed outside the mount matter too.
  size_t release_deleted() noexcept;
  // An unlink, rmdir, rename that may replace a target, undo's change, or an
  // ENOSPC: the next sweep looks for files with no name left.
  void note_name_dropped() noexcept { dropped_.fetch_add(1, std::memory_order_release); }
  // unlink and rmdir, once the gate allowed them: unlinkat(2) with `flags` while
  // cached paths are marked changing, then the note above. 0 or -errno.
  int remove_name(Inode& dir, const std::string& name, int flags) noexcept;

  // The per-turn journal (journal/journal.hpp), if any; set before mounting.
  // Every mutation the gate allows first has its pre-image recorded
  // (fuse/journal_hooks.cpp); the journal_* helpers return 0, or -errno when it
  // could not be kept, and then the mutation does not happen.
  void set_journal(journal::Journal* journal) noexcept { journal_ = journal; }
  int journal_inode(const Inode& inode, bool append = false);
  int journal_entry(const Inode& parent, std::string_view name);
  int journal_path(std::string_view path, bool append = false);
  int journal_rename(const gate::RenamePlan& plan);  // both names, as the gate judged them
  // The daemon changed `path` underneath (undo): the kernel drops what it cached
  // of the name and of the object. Not from a filesystem worker.
  void drop_cached(const std::string& path) noexcept;

  // Open files. The filesystem owns every handle it hands the kernel, so that
  // handles the kernel never releases (a lazy unmount while files are still open)
  // are freed with it rather than leaked.
  uint64_t adopt(std::unique_ptr<FileHandle> handle);
  // The handle leaves the table (released, or its open never reached the
  // caller); its I/O mode is counted out (io_modes.hpp).
  std::unique_ptr<FileHandle> disown(fuse_req_t req, uint64_t fh);
  IoModes& io_modes() noexcept { return io_modes_; }
  const IoModes& io_modes() const noexcept { return io_modes_; }

  static gate::Caller caller(fuse_req_t req) noexcept {
    const fuse_ctx* ctx = fuse_req_ctx(req);
    return gate::Caller{ctx->pid, ctx->uid, ctx->gid};
  }

  // "/proc/self/fd/N": a name for an O_PATH descriptor usable by path-only calls.
  static std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

 private:
  // `name` empty: `base` itself; otherwise the entry `name` in directory `base`.
  // `where`: the handle's cached path, used for `base` itself when names are stable.
  int check(gate::Op op, bool is_protected, const Inode& base, std::string_view name,
            const gate::Caller& caller, std::string* grant_id, CachedPath* where = nullptr,
            bool append = false);
  // Parts of path_of: a /proc target relative to the root (or unresolved);
  // whether `path` names the file `st` describes; another live name of the file
  // behind `fd`, or "".
  std::string relative_to_root(const std::string& target) const;
  bool names_this_file(const std::string& path, const struct stat& st) const;
  std::string live_name_of(int fd) const;
  // Another name of the file `st` in the directory of the name `gone`, or "".
  std::string name_beside(const std::string& gone, const struct stat& st) const;
  // A temporary sibling that outlived its lease, if still under the name it was
  // created with: moved into its turn's journal (deleted when there is no
  // journal), reported as gate::DenyReason::kTemporaryLeftover, and dropped from
  // the kernel's caches (fuse/temp_leftover.cpp).
  void take_leftover(const TempSibling& sibling) noexcept;
  // path_of(inode) when names are stable, from the handle's `where` or, without
  // a handle, from inode_paths_, while still valid (path_cache.hpp,
  // inode_path_cache.hpp).
  std::string cached_path_of(const Inode& inode, CachedPath* where = nullptr) const;

  gate::Gate& gate_;
  report::Reporter& reporter_;
  journal::Journal* journal_ = nullptr;
  base::DiskReserve* reserve_ = nullptr;
  FsOptions options_;
  bool no_opendir_ = false;
  TransportInUse transport_;
  Inode root_;
  std::string root_prefix_;         // backing path of the root, as /proc/self/fd shows it
  std::unique_ptr<FdCache> cache_;  // before table_: inodes give their fds back to it
  InodeTable table_;
  LongrunIdentity longrun_;  // .longrun by (st_dev, st_ino), whatever the name
  TempSiblings siblings_;
  PageInvalidator pages_;
  NamesGeneration names_;
  std::atomic<uint64_t> dropped_{1};  // note_name_dropped
  uint64_t swept_at_ = 0;             // dropped_ as the last sweep began (its thread only)
  mutable InodePathCache inode_paths_;
  LinkNames link_names_;   // files with several names: the last one looked up
  std::mutex handles_mu_;  // guards handles_; taken on open and release only
  std::unordered_map<const FileHandle*, std::unique_ptr<FileHandle>> handles_;
  LockWaits lock_waits_;
  IoModes io_modes_;
  ParkedRequests parked_;  // last: its thread stops before anything it may use goes
};

// For the duration of a creating syscall, the calling thread acts with the
// caller's fsuid/fsgid so new files belong to the caller, as on a local
// filesystem. Per thread on Linux (raw syscalls; glibc does not broadcast these).
// Also gives the thread (its own fs_struct, made once) the caller's umask: with
// POSIX ACLs the kernel does not apply it, and the backing file system applies
// it exactly when the directory has no default ACL, as natively.
class ActAsCaller {
 public:
  explicit ActAsCaller(const gate::Caller& caller, mode_t umask = 0) noexcept;
  ~ActAsCaller();
  ActAsCaller(const ActAsCaller&) = delete;
  ActAsCaller& operator=(const ActAsCaller&) = delete;

 private:
  bool switched_ = false;
};

// Runs one operation body; any exception that escapes becomes EIO and a log line.
// The body must send exactly one reply, as its last act. (libfuse's /dev/fuse
// workers disable thread cancellation while a request is processed, and ring
// threads are made to on their first request, so no forced unwind passes here.)
template <class Fn>
void guarded(fuse_req_t req, const char* op, Fn&& body) noexcept;

void log_stray_exception(const char* op, const char* what) noexcept;

// One mutating operation, in ask mode's terms. `attempt(req)` replies and returns
// 0, or returns -errno without replying. A gate refusal that ask mode may put to a
// person is asked (parked_requests.hpp); with AskWait::kPark (only an open for
// writing of an existing file, which holds no directory lock in the kernel) the
// request waits with a copy of `attempt`, run again when approved (so `attempt`
// must own copies of its arguments); otherwise the request is filed and the
// refusal replied at once. Exceptions are answered as guarded() answers them, on
// either run.
enum class AskWait : bool { kFileOnly, kPark };
template <class Attempt>
void attempt_or_park(fuse_req_t req, const char* op, Attempt attempt,
                     AskWait wait = AskWait::kFileOnly) noexcept;

}  // namespace leasefs::fuse

namespace leasefs::fuse {

template <class Fn>
void guarded(fuse_req_t req, const char* op, Fn&& body) noexcept {
  Filesystem::of(req).transport().on_request(req);
  try {
    body();
  } catch (const std::system_error& e) {
    // A descriptor that could not be had (EMFILE, ENFILE) or a file that is gone
    // (ESTALE): this request fails with that errno, nothing else does.
    if (e.code().category() != std::generic_category() || e.code().value() <= 0) {
      log_stray_exception(op, e.what());
      reply_status(req, -EIO);
    } else {
      reply_status(req, -e.code().value());
    }
  } catch (const std::exception& e) {
    log_stray_exception(op, e.what());
    reply_status(req, -EIO);
  } catch (...) {
    log_stray_exception(op, "unknown exception");
    reply_status(req, -EIO);
  }
}

template <class Attempt>
void attempt_or_park(fuse_req_t req, const char* op, Attempt attempt, AskWait wait) noexcept {
  guarded(req, op, [&] {
    RefusalNote note;
    const int res = attempt(req);
    if (res == 0) return;
    if (res == -EACCES && note.refusal()) {
      ParkedRequests::Attempt again;
      if (wait == AskWait::kPark) {
        again = [op, attempt](fuse_req_t r) {
          guarded(r, op, [&] {
            if (int err = attempt(r); err != 0) reply_status(r, err);
          });
        };
      }
      if (Filesystem::of(req).park(req, *note.refusal(), std::move(again),
                                   wait == AskWait::kPark)) {
        return;
      }
    }
    note.report();  // before the reply: `status` right after the failure shows it
    reply_status(req, res);
  });
}

}  // namespace leasefs::fuse

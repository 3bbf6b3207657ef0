#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <optional>

#include "fuse/file_handle.hpp"
#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

// A new file: judged as a create (or a temporary sibling), made with O_EXCL so
// that an existing file is never truncated by it (-EEXIST instead).
int create_new(fuse_req_t req, Filesystem& fs, Inode& dir, const char* name, mode_t mode,
               fuse_file_info* fi, fuse_entry_param* e) {
  auto handle = std::make_unique<FileHandle>();
  handle->opener = Filesystem::caller(req);
  handle->writable = true;
  const bool is_protected = fs.child_protected(dir, name);
  const uint64_t names_gen = fs.names().now();  // before the path (path_cache.hpp)
  handle->path = fs.gate_path_of(dir, name, is_protected);
  gate::Gate& gate = fs.gate();
  gate::Verdict v = gate.check(gate::Op::kCreate, handle->path, handle->opener);
  // Out of scope, but beside a path a grant edits: a temporary sibling
  // (gate/temp_sibling.hpp), created exclusively so that no existing file can
  // become one.
  std::optional<uint64_t> sibling_turn;
  if (!v.allowed && v.reason == gate::DenyReason::kOutOfScope && !is_protected) {
    uint64_t turn = 0;
    gate::Verdict sv = gate.check_temp_sibling(handle->path, handle->opener, &turn);
    if (sv.allowed) {
      v = std::move(sv);
      sibling_turn = turn;
    }
  }
  if (!v.allowed) {
    fs.refuse(gate::Op::kCreate, handle->path, handle->opener, v.reason);
    return -EACCES;
  }
  handle->grant_id = std::move(v.grant_id);
  if (int res = fs.room_for(gate::Op::kCreate); res < 0) return res;
  if (int res = fs.journal_path(handle->path); res < 0) return res;
  fs.report_allowed(gate::Op::kCreate, handle->path, handle->opener, handle->grant_id);
  int flags = (fi->flags & ~O_NOFOLLOW) | O_CREAT | O_EXCL | O_CLOEXEC;
  // A file this call makes opens in any access mode whatever its mode bits
  // (open(2)), and the kernel keeps the caller to the mode it asked for. Made
  // readable, its descriptor serves the audit's hash at release, which then
  // needs no reopen through /proc (op_release.cpp).
  if ((flags & O_ACCMODE) == O_WRONLY) flags = (flags & ~O_ACCMODE) | O_RDWR;
  if (!handle->slot.take()) return -EMFILE;
  {
    ActAsCaller as(handle->opener, fuse_req_ctx(req)->umask);
    handle->fd.reset(::openat(dir.fd.get(), name, flags, mode));
  }
  if (!handle->fd) return -errno;
  if (int res = fs.lookup(dir, name, e); res < 0) return res;
  handle->inode = reinterpret_cast<Inode*>(e->ino);
  // Nothing gives a new file security.capability (only a setxattr does, which
  // resets this): the kernel's question before the first write is answered
  // without a syscall (op_xattr.cpp). Only when the name still leads to the file
  // made here, not to one a racing rename put there.
  struct stat made {};
  if (::fstat(handle->fd.get(), &made) == 0 && made.st_ino == e->attr.st_ino &&
      made.st_dev == e->attr.st_dev) {
    handle->inode->capability.store(0, std::memory_order_relaxed);
  }
  // Its only name is the one just judged (a file with more names, opened by a
  // racing create, is left to be resolved).
  if (!is_protected && e->attr.st_nlink == 1) {
    fs.remember_path(*handle->inode, names_gen, handle->path);
  }
  if (sibling_turn &&
      !fs.temp_siblings().add({handle->inode->dev, handle->inode->ino, *sibling_turn, handle->path,
                               handle->opener,
                               std::make_shared<const base::UniqueFd>(
                                   ::fcntl(handle->inode->fd.get(), F_DUPFD_CLOEXEC, 0))})) {
    // Too many temporaries this turn: the create is refused after all.
    ::unlinkat(dir.fd.get(), name, 0);
    fs.table().forget(handle->inode, 1);
    fs.reporter().refusal(gate::Op::kCreate, handle->path, handle->opener,
                          gate::DenyReason::kOutOfScope);
    return -EACCES;
  }
  apply_cache_policy(fi, is_protected);
  // A new file is written next, whatever its access mode: never passed through.
  // (No reader of it can be passed through yet, but for a name raced onto an
  // existing file.)
  handle->io_mode = fs.io_modes().open_writer(handle->inode, is_protected);
  if (handle->io_mode == IoMode::kRefused) return -ETXTBSY;
  fi->fh = fs.adopt(std::move(handle));
  return 0;
}

// The kernel sends CREATE when it believes `name` is free; underneath it may
// exist all the same (its negative entry went stale). Then this is an open of
// that file and is judged as one: truncating existing content is a write, which
// a create-only grant does not allow.
int do_create(fuse_req_t req, Filesystem& fs, Inode& dir, const char* name, mode_t mode,
              fuse_file_info* fi, fuse_entry_param* e) {
  for (int tries = 0; tries < 2; ++tries) {
    struct stat st {};
    if (::fstatat(dir.fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      const int res = create_new(req, fs, dir, name, mode, fi, e);
      if (res != -EEXIST) return res;
    }
    if (fi->flags & O_EXCL) return -EEXIST;
    if (const int res = fs.lookup(dir, name, e); res == -ENOENT) {
      continue;  // gone again: create it
    } else if (res < 0) {
      return res;
    }
    Inode* inode = reinterpret_cast<Inode*>(e->ino);
    fuse_file_info existing = *fi;
    existing.flags &= ~(O_CREAT | O_EXCL);
    // A directory fails as natively, whatever the access mode; a symlink is not
    // followed (ELOOP): it may lead out of the root. A FIFO or device is not
    // opened here, where an open could block a worker for good: ENXIO, as a FIFO
    // opened without waiting answers.
    const mode_t type = e->attr.st_mode & S_IFMT;
    const int res = type == S_IFDIR ? -EISDIR
                    : type == S_IFREG || type == S_IFLNK
                        ? open_inode(req, fs, *inode, &existing, true)
                        : -ENXIO;
    if (res < 0) {
      fs.table().forget(inode, 1);
      return res;
    }
    *fi = existing;
    // The entry carries the file as the open left it (O_TRUNC: empty).
    struct stat now {};
    if (::fstat(handle_of(fi).fd.get(), &now) == 0) e->attr = now;
    return 0;
  }
  return -EEXIST;  // an agent racing create and unlink of the name: give up
}

}  // namespace

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
               fuse_file_info* fi) {
  attempt_or_park(req, "create",
                  [parent, name = std::string(name), mode, info = *fi](fuse_req_t req) {
                    Filesystem& fs = Filesystem::of(req);
                    fuse_entry_param e{};
                    fuse_file_info fi = info;
                    int res = do_create(req, fs, fs.inode(parent), name.c_str(), mode, &fi, &e);
                    if (res < 0) return res;
                    if (fuse_reply_create(req, &e, &fi) != 0) {
                      fs.disown(req, fi.fh);
                      fs.table().forget(reinterpret_cast<Inode*>(e.ino), 1);
                    }
                    return 0;
                  });
}

}  // namespace leasefs::fuse

#include <fcntl.h>

#include <memory>

#include "fuse/file_handle.hpp"
#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

int do_create(fuse_req_t req, Filesystem& fs, Inode& dir, const char* name, mode_t mode,
              fuse_file_info* fi, fuse_entry_param* e) {
  auto handle = std::make_unique<FileHandle>();
  handle->opener = Filesystem::caller(req);
  handle->writable = true;
  const bool is_protected = fs.child_protected(dir, name);
  handle->path = fs.path_of(dir, name);
  if (is_protected && !gate::is_protected_path(handle->path)) handle->path = ".longrun";
  if (int res = fs.gate_path(gate::Op::kCreate, handle->path, handle->opener, &handle->grant_id);
      res < 0) {
    return res;
  }
  const int flags = (fi->flags & ~O_NOFOLLOW) | O_CREAT | O_CLOEXEC;
  if (!handle->slot.take()) return -EMFILE;
  {
    ActAsCaller as(handle->opener);
    handle->fd.reset(::openat(dir.fd.get(), name, flags, mode));
  }
  if (!handle->fd) return -errno;
  if (int res = fs.lookup(dir, name, e); res < 0) return res;
  handle->inode = reinterpret_cast<Inode*>(e->ino);
  apply_cache_policy(fi, is_protected);
  fi->fh = fs.adopt(std::move(handle));
  return 0;
}

}  // namespace

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
               fuse_file_info* fi) {
  guarded(req, "create", [&] {
    Filesystem& fs = Filesystem::of(req);
    fuse_entry_param e{};
    int res = do_create(req, fs, fs.inode(parent), name, mode, fi, &e);
    if (res < 0) return static_cast<void>(fuse_reply_err(req, -res));
    if (fuse_reply_create(req, &e, fi) != 0) {
      fs.disown(fi->fh);
      fs.table().forget(reinterpret_cast<Inode*>(e.ino), 1);
    }
  });
}

}  // namespace leasefs::fuse

#include <fcntl.h>

#include <memory>
#include <optional>

#include "fuse/file_handle.hpp"
#include "fuse/operations.hpp"
#include "fuse/privilege_bits.hpp"

namespace leasefs::fuse {

namespace {
// The kernel's __FMODE_EXEC: execve opens the file with it, and FUSE_OPEN passes
// it on in the flags (it is not in <fcntl.h>).
constexpr int kExecOpen = 040;
}  // namespace

int open_inode(fuse_req_t req, Filesystem& fs, Inode& inode, fuse_file_info* fi, bool as_caller) {
  auto handle = std::make_unique<FileHandle>();
  handle->inode = &inode;
  handle->opener = Filesystem::caller(req);
  handle->writable = opens_for_write(fi->flags);
  handle->append = (fi->flags & O_APPEND) != 0 && (fi->flags & O_TRUNC) == 0;
  const bool is_protected = inode.protected_path.load();
  if ((fi->flags & kExecOpen) != 0 && !is_protected) {
    // A temporary sibling is for an edit of the file beside it: never run (temp_sibling.hpp).
    if (fs.temp_siblings().find(inode.dev, inode.ino)) {
      fs.refuse(gate::Op::kExec, fs.gate_path_of(inode, {}, false), handle->opener,
                gate::DenyReason::kOutOfScope);
      return -EACCES;
    }
  }
  if (handle->writable) {
    // The path is resolved once here and reused by every write on this handle.
    handle->path = fs.gate_path_of(inode, {}, is_protected);
    // A temporary sibling of this turn (gate/temp_sibling.hpp) may be reopened
    // for writing; anything else asks the gate as usual.
    std::optional<TempSibling> sibling =
        is_protected ? std::nullopt : fs.temp_siblings().find(inode.dev, inode.ino);
    gate::Verdict sv;
    if (sibling) {
      sv = fs.gate().check_on_temp_sibling(gate::Op::kOpenWrite, sibling->turn, handle->opener);
    }
    if (sv.allowed) {
      handle->grant_id = std::move(sv.grant_id);
    } else if (int res = fs.gate_path(gate::Op::kOpenWrite, handle->path, handle->opener,
                                      &handle->grant_id, handle->append);
               res < 0) {
      return res;
    }
  }
  // Before anything is opened or truncated: a writer beside a passed-through
  // reader is refused here, not failed by the kernel after the open (io_modes.hpp).
  if (handle->writable) {
    handle->io_mode = fs.io_modes().open_writer(&inode, is_protected);
    if (handle->io_mode == IoMode::kRefused) return -ETXTBSY;
  }
  struct Unreserve {  // a counted writer whose open fails is counted out
    fuse_req_t req;
    Filesystem& fs;
    FileHandle* handle;
    ~Unreserve() {
      if (handle) fs.io_modes().closed(req, handle->inode, handle->io_mode);
    }
  } unreserve{req, fs, handle.get()};
  const int flags = (fi->flags & ~O_NOFOLLOW) | O_CLOEXEC;
  if (!handle->slot.take()) return -EMFILE;
  {
    std::optional<ActAsCaller> as;
    if (as_caller) as.emplace(handle->opener);
    handle->fd.reset(::open(Filesystem::fd_path(inode.fd.get()).c_str(), flags));
  }
  if (!handle->fd) return -errno;
  if (flags & O_TRUNC) {
    if (int res = drop_privilege_bits(req, fs.node_id(&inode), handle->fd.get()); res < 0)
      return res;
  }
  apply_cache_policy(fi, is_protected);
  if (!handle->writable) {
    handle->io_mode = fs.io_modes().open_reader(req, &inode, handle->fd.get(), is_protected, fi);
  }
  unreserve.handle = nullptr;  // from here the handle's release counts it out
  fi->fh = fs.adopt(std::move(handle));
  return 0;
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  attempt_or_park(
      req, "open",
      [ino, info = *fi](fuse_req_t req) {
        Filesystem& fs = Filesystem::of(req);
        fuse_file_info fi = info;
        if (int res = open_inode(req, fs, fs.inode(ino), &fi, false); res < 0) return res;
        if (fuse_reply_open(req, &fi) != 0) {
          // The opener went away (interrupted); no release will come for this handle.
          fs.disown(req, fi.fh);
        }
        return 0;
      },
      AskWait::kPark);
}

}  // namespace leasefs::fuse

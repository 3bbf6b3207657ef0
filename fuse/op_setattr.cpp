// setattr: size is a truncate (Op::kTruncate), anything else (mode, owner, times)
// is Op::kSetattr. Both are asked when both are set.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

constexpr int kAttrBits = FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
                          FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
                          FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_CTIME;

int do_setattr(fuse_req_t req, Filesystem& fs, Inode& inode, const struct stat& attr, int valid,
               fuse_file_info* fi, struct stat* out) {
  const gate::Caller caller = Filesystem::caller(req);
  const FileHandle* handle = fi ? &handle_of(fi) : nullptr;
  // With or without a handle, the file is judged by where it is now (a handle's
  // name from open time may be stale after a rename; see gate_handle).
  auto ask = [&](gate::Op op) { return fs.gate_inode(op, inode, caller); };
  if (valid & FUSE_SET_ATTR_SIZE) {
    if (int res = ask(gate::Op::kTruncate); res < 0) return res;
  }
  if (valid & kAttrBits) {
    if (int res = ask(gate::Op::kSetattr); res < 0) return res;
  }

  const PinnedFd ifd = inode.fd.get();  // open until the end of the call
  const std::string proc = Filesystem::fd_path(ifd);
  if (valid & FUSE_SET_ATTR_MODE) {
    int res = fi ? ::fchmod(handle->fd.get(), attr.st_mode)
                 : ::fchmodat(AT_FDCWD, proc.c_str(), attr.st_mode, 0);
    if (res != 0) return -errno;
  }
  if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr.st_uid : static_cast<uid_t>(-1);
    gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr.st_gid : static_cast<gid_t>(-1);
    if (::fchownat(ifd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return -errno;
  }
  if (valid & FUSE_SET_ATTR_SIZE) {
    int res =
        fi ? ::ftruncate(handle->fd.get(), attr.st_size) : ::truncate(proc.c_str(), attr.st_size);
    if (res != 0) return -errno;
  }
  if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    struct timespec tv[2];
    tv[0].tv_sec = tv[1].tv_sec = 0;
    tv[0].tv_nsec = tv[1].tv_nsec = UTIME_OMIT;
    if (valid & FUSE_SET_ATTR_ATIME_NOW) {
      tv[0].tv_nsec = UTIME_NOW;
    } else if (valid & FUSE_SET_ATTR_ATIME) {
      tv[0] = attr.st_atim;
    }
    if (valid & FUSE_SET_ATTR_MTIME_NOW) {
      tv[1].tv_nsec = UTIME_NOW;
    } else if (valid & FUSE_SET_ATTR_MTIME) {
      tv[1] = attr.st_mtim;
    }
    int res;
    if (fi) {
      res = ::futimens(handle->fd.get(), tv);
    } else if (inode.type == S_IFLNK) {
      // No path-free way to touch a symlink itself; its parent is unknown here.
      errno = EOPNOTSUPP;
      res = -1;
    } else {
      res = ::utimensat(AT_FDCWD, proc.c_str(), tv, 0);
    }
    if (res != 0) return -errno;
  }
  if (::fstatat(ifd, "", out, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return -errno;
  return 0;
}

}  // namespace

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int valid, fuse_file_info* fi) {
  guarded(req, "setattr", [&] {
    Filesystem& fs = Filesystem::of(req);
    Inode& inode = fs.inode(ino);
    struct stat st {};
    int res = do_setattr(req, fs, inode, *attr, valid, fi, &st);
    if (res < 0) return static_cast<void>(fuse_reply_err(req, -res));
    fuse_reply_attr(req, &st, fs.timeout_for(inode.protected_path.load()));
  });
}

}  // namespace leasefs::fuse

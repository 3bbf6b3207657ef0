// setattr: size is a truncate (Op::kTruncate), anything else (mode, owner, times)
// is Op::kSetattr. Both are asked when both are set.
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <optional>

#include "fuse/operations.hpp"
#include "fuse/privilege_bits.hpp"

namespace leasefs::fuse {

namespace {

// Sets the times of the symlink `inode` itself (utimensat with
// AT_SYMLINK_NOFOLLOW needs a directory and a name): opens its parent beneath the
// root without following symlinks, checks the name still is this inode, and sets
// the times there. A symlink whose path cannot be expressed keeps EOPNOTSUPP.
int utimens_symlink(Filesystem& fs, const Inode& inode, const struct timespec tv[2]) {
  const std::string path = fs.path_of(inode);
  if (!gate::is_expressible(path) || path.empty()) {
    errno = EOPNOTSUPP;
    return -1;
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  base::UniqueFd parent(
      static_cast<int>(::syscall(SYS_openat2, static_cast<int>(fs.inode(FUSE_ROOT_ID).fd.get()),
                                 dir.c_str(), &how, sizeof how)));
  if (!parent) return -1;
  struct stat st {};
  if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return -1;
  if (st.st_dev != inode.dev || st.st_ino != inode.ino) {
    errno = ESTALE;  // renamed meanwhile; the caller may retry
    return -1;
  }
  return ::utimensat(parent.get(), name.c_str(), tv, AT_SYMLINK_NOFOLLOW);
}

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
  // A SETATTR that changes nothing named (chown(f, -1, -1)) still moves the ctime.
  const bool ctime_only = (valid & (kAttrBits | FUSE_SET_ATTR_SIZE) & ~FUSE_SET_ATTR_CTIME) == 0;
  if ((valid & kAttrBits) || ctime_only) {
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
    if (int r = drop_privilege_bits(req, fs.node_id(&inode), fi ? handle->fd.get() : ifd.get());
        r < 0)
      return r;
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
      // No path-free way to touch a symlink itself: through its parent and name.
      res = utimens_symlink(fs, inode, tv);
    } else {
      res = ::utimensat(AT_FDCWD, proc.c_str(), tv, 0);
    }
    if (res != 0) return -errno;
  }
  // The same no-op chown underneath gives the backing file system's answer.
  if (ctime_only) {
    if (::fchownat(ifd, "", static_cast<uid_t>(-1), static_cast<gid_t>(-1),
                   AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
      return -errno;
    }
  }
  if (::fstatat(ifd, "", out, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return -errno;
  return 0;
}

}  // namespace

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int valid, fuse_file_info* fi) {
  std::optional<fuse_file_info> info;
  if (fi) info = *fi;
  attempt_or_park(req, "setattr", [ino, attr = *attr, valid, info](fuse_req_t req) {
    Filesystem& fs = Filesystem::of(req);
    Inode& inode = fs.inode(ino);
    std::optional<fuse_file_info> fi = info;
    struct stat st {};
    int res = do_setattr(req, fs, inode, attr, valid, fi ? &*fi : nullptr, &st);
    if (res < 0) return res;
    fuse_reply_attr(req, &st, fs.timeout_for(inode.protected_path.load()));
    return 0;
  });
}

}  // namespace leasefs::fuse

#include <fcntl.h>
#include <sys/stat.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

int do_getattr(Filesystem& fs, fuse_ino_t ino, struct stat* st) {
  Inode& inode = fs.inode(ino);
  if (::fstatat(inode.fd.get(), "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return -errno;
  return 0;
}

}  // namespace

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* /*fi*/) {
  guarded(req, "getattr", [&] {
    Filesystem& fs = Filesystem::of(req);
    struct stat st {};
    int res = do_getattr(fs, ino, &st);
    if (res < 0) return static_cast<void>(reply_status(req, res));
    fuse_reply_attr(req, &st, fs.timeout_for(fs.inode(ino).protected_path.load()));
  });
}

}  // namespace leasefs::fuse

#include <sys/statvfs.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

void op_statfs(fuse_req_t req, fuse_ino_t ino) {
  guarded(req, "statfs", [&] {
    struct statvfs sv {};
    if (::fstatvfs(Filesystem::of(req).inode(ino).fd.get(), &sv) != 0) {
      return static_cast<void>(reply_status(req, -errno));
    }
    fuse_reply_statfs(req, &sv);
  });
}

}  // namespace leasefs::fuse

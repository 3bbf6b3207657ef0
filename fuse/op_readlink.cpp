#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

void op_readlink(fuse_req_t req, fuse_ino_t ino) {
  guarded(req, "readlink", [&] {
    Filesystem& fs = Filesystem::of(req);
    char buf[PATH_MAX + 1];
    ssize_t n = ::readlinkat(fs.inode(ino).fd.get(), "", buf, PATH_MAX);
    if (n < 0) return static_cast<void>(reply_status(req, -errno));
    buf[n] = '\0';
    fuse_reply_readlink(req, buf);
  });
}

}  // namespace leasefs::fuse

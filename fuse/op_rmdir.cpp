#include <fcntl.h>
#include <unistd.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  guarded(req, "rmdir", [&] {
    Filesystem& fs = Filesystem::of(req);
    Inode& dir = fs.inode(parent);
    int res = fs.gate_entry(gate::Op::kRmdir, dir, name, Filesystem::caller(req));
    if (res == 0 && ::unlinkat(dir.fd.get(), name, AT_REMOVEDIR) != 0) res = -errno;
    fuse_reply_err(req, -res);
  });
}

}  // namespace leasefs::fuse

#include <fcntl.h>
#include <unistd.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  guarded(req, "unlink", [&] {
    Filesystem& fs = Filesystem::of(req);
    Inode& dir = fs.inode(parent);
    int res = fs.gate_entry(gate::Op::kUnlink, dir, name, Filesystem::caller(req));
    if (res == 0 && ::unlinkat(dir.fd.get(), name, 0) != 0) res = -errno;
    fuse_reply_err(req, -res);
  });
}

}  // namespace leasefs::fuse

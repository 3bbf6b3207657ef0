#include <fcntl.h>

#include "fuse/operations.hpp"
#include "fuse/privilege_bits.hpp"

namespace leasefs::fuse {

void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
                  fuse_file_info* fi) {
  guarded(req, "fallocate", [&] {
    Filesystem& fs = Filesystem::of(req);
    FileHandle& handle = handle_of(fi);
    int res = fs.gate_handle(gate::Op::kFallocate, handle, Filesystem::caller(req));
    if (res == 0 && ::fallocate(handle.fd.get(), mode, offset, length) != 0) res = -errno;
    if (res == 0) res = drop_privilege_bits(req, ino, handle.fd.get());
    reply_status(req, res);
  });
}

}  // namespace leasefs::fuse

#include <unistd.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

// Never gated: fsync only makes durable what the gate already let through.
void op_fsync(fuse_req_t req, fuse_ino_t /*ino*/, int datasync, fuse_file_info* fi) {
  guarded(req, "fsync", [&] {
    const int fd = handle_of(fi).fd.get();
    const int res = (datasync ? ::fdatasync(fd) : ::fsync(fd)) == 0 ? 0 : -errno;
    reply_status(req, res);
  });
}

}  // namespace leasefs::fuse

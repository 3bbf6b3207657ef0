#include <unistd.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

// SEEK_DATA / SEEK_HOLE reach the file underneath (sparse files stay sparse-aware).
void op_lseek(fuse_req_t req, fuse_ino_t /*ino*/, off_t off, int whence, fuse_file_info* fi) {
  guarded(req, "lseek", [&] {
    off_t res = ::lseek(handle_of(fi).fd.get(), off, whence);
    if (res < 0) return static_cast<void>(reply_status(req, -errno));
    fuse_reply_lseek(req, res);
  });
}

}  // namespace leasefs::fuse

#include <sys/file.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

// BSD locks are taken on the backing descriptor, so they hold against processes
// using the tree underneath too. Not a mutation of the tree: never gated.
void op_flock(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi, int op) {
  guarded(req, "flock", [&] {
    const int res = ::flock(handle_of(fi).fd.get(), op) == 0 ? 0 : -errno;
    reply_status(req, res);
  });
}

}  // namespace leasefs::fuse

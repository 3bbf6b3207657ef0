#include <sys/file.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

// BSD locks are taken on the backing descriptor, so they hold against processes
// using the tree underneath too. Not a mutation of the tree: never gated.
void op_flock(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi, int op) {
  guarded(req, "flock", [&] {
    int res = ::flock(handle_of(fi).fd.get(), op);
    fuse_reply_err(req, res == 0 ? 0 : errno);
  });
}

}  // namespace leasefs::fuse

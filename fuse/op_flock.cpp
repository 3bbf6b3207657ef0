#include "fuse/operations.hpp"

namespace leasefs::fuse {

// BSD locks are taken on the backing descriptor, so they hold against processes
// using the tree underneath too. Not a mutation of the tree: never gated. A wait
// for a lock ends when its process is interrupted or the daemon stops
// (lock_waits.hpp).
void op_flock(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi, int op) {
  guarded(req, "flock", [&] {
    reply_status(req, Filesystem::of(req).lock_waits().flock(req, handle_of(fi).fd.get(), op));
  });
}

}  // namespace leasefs::fuse

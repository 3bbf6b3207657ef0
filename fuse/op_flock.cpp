#include "fuse/operations.hpp"

namespace leasefs::fuse {

// BSD locks are taken on the backing descriptor, so they hold against processes
// using the tree underneath too. Not a mutation of the tree: never gated. A wait
// for a lock ends when its process is interrupted or the daemon stops
// (lock_waits.hpp).
void op_flock(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi, int op) {
  guarded(req, "flock", [&] {
    Filesystem& fs = Filesystem::of(req);
    LockWaits& waits = fs.lock_waits();
    const int fd = handle_of(fi).fd.get();
    // A ring thread serves a whole CPU's queue: it never waits; nor does a
    // request no interrupt would end (lock_waits.hpp).
    if (!fs.transport().interrupts_reach(req)) {
      int res = 0;
      if (!waits.wait_elsewhere(req, fd, op, &res)) reply_status(req, res);
      return;
    }
    reply_status(req, waits.flock(req, fd, op));
  });
}

}  // namespace leasefs::fuse

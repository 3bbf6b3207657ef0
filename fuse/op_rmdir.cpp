#include <fcntl.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  attempt_or_park(req, "rmdir", [parent, name = std::string(name)](fuse_req_t req) {
    Filesystem& fs = Filesystem::of(req);
    Inode& dir = fs.inode(parent);
    if (int res = fs.gate_entry(gate::Op::kRmdir, dir, name, Filesystem::caller(req)); res < 0) {
      return res;
    }
    if (int res = fs.remove_name(dir, name, AT_REMOVEDIR); res < 0) return res;
    reply_status(req, 0);
    return 0;
  });
}

}  // namespace leasefs::fuse

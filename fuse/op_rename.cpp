// rename, with RENAME_NOREPLACE / RENAME_EXCHANGE passed to renameat2. Both the
// source and the destination names are asked (either may be under .longrun).
#include <fcntl.h>
#include <stdio.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
               const char* newname, unsigned int flags) {
  guarded(req, "rename", [&] {
    Filesystem& fs = Filesystem::of(req);
    Inode& from = fs.inode(parent);
    Inode& to = fs.inode(newparent);
    const gate::Caller caller = Filesystem::caller(req);
    int res = fs.gate_entry(gate::Op::kRename, from, name, caller);
    if (res == 0) res = fs.gate_entry(gate::Op::kRename, to, newname, caller);
    if (res == 0 && ::renameat2(from.fd.get(), name, to.fd.get(), newname, flags) != 0) {
      res = -errno;
    }
    fuse_reply_err(req, -res);
  });
}

}  // namespace leasefs::fuse

#include "fuse/operations.hpp"

namespace leasefs::fuse {

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  guarded(req, "lookup", [&] {
    Filesystem& fs = Filesystem::of(req);
    Inode& dir = fs.inode(parent);
    fuse_entry_param e{};
    int res = fs.lookup(dir, name, &e);
    if (res == -ENOENT) {
      // A negative entry, cached like a positive one, except under .longrun where
      // the daemon creates files underneath.
      e = fuse_entry_param{};
      e.entry_timeout = fs.timeout_for(fs.child_protected(dir, name));
      fuse_reply_entry(req, &e);
    } else if (res < 0) {
      reply_status(req, res);
    } else {
      fuse_reply_entry(req, &e);
    }
  });
}

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  Filesystem& fs = Filesystem::of(req);
  if (ino != FUSE_ROOT_ID) fs.table().forget(&fs.inode(ino), nlookup);
  fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  Filesystem& fs = Filesystem::of(req);
  for (size_t i = 0; i < count; ++i) {
    if (forgets[i].ino != FUSE_ROOT_ID) {
      fs.table().forget(&fs.inode(forgets[i].ino), forgets[i].nlookup);
    }
  }
  fuse_reply_none(req);
}

}  // namespace leasefs::fuse

#include <fcntl.h>
#include <unistd.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

int do_symlink(fuse_req_t req, Filesystem& fs, const char* link, Inode& dir, const char* name,
               fuse_entry_param* e) {
  const gate::Caller caller = Filesystem::caller(req);
  if (int res = fs.gate_entry(gate::Op::kSymlink, dir, name, caller); res < 0) return res;
  {
    ActAsCaller as(caller, fuse_req_ctx(req)->umask);
    if (::symlinkat(link, dir.fd.get(), name) != 0) return -errno;
  }
  return fs.lookup(dir, name, e);
}

}  // namespace

void op_symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name) {
  guarded(req, "symlink", [&] {
    Filesystem& fs = Filesystem::of(req);
    fuse_entry_param e{};
    int res = do_symlink(req, fs, link, fs.inode(parent), name, &e);
    if (res < 0) return static_cast<void>(fuse_reply_err(req, -res));
    fuse_reply_entry(req, &e);
  });
}

}  // namespace leasefs::fuse

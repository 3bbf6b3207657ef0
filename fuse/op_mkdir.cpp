#include <fcntl.h>
#include <sys/stat.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

int do_mkdir(fuse_req_t req, Filesystem& fs, Inode& dir, const char* name, mode_t mode,
             fuse_entry_param* e) {
  const gate::Caller caller = Filesystem::caller(req);
  if (int res = fs.gate_entry(gate::Op::kMkdir, dir, name, caller); res < 0) return res;
  {
    ActAsCaller as(caller, fuse_req_ctx(req)->umask);
    if (::mkdirat(dir.fd.get(), name, mode) != 0) return -errno;
  }
  return fs.lookup(dir, name, e);
}

}  // namespace

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  attempt_or_park(req, "mkdir", [parent, name = std::string(name), mode](fuse_req_t req) {
    Filesystem& fs = Filesystem::of(req);
    fuse_entry_param e{};
    if (int res = do_mkdir(req, fs, fs.inode(parent), name.c_str(), mode, &e); res < 0) return res;
    fuse_reply_entry(req, &e);
    return 0;
  });
}

}  // namespace leasefs::fuse

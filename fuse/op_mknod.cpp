#include <fcntl.h>
#include <sys/stat.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

int do_mknod(fuse_req_t req, Filesystem& fs, Inode& dir, const char* name, mode_t mode, dev_t rdev,
             fuse_entry_param* e) {
  const gate::Caller caller = Filesystem::caller(req);
  if (int res = fs.gate_entry(gate::Op::kMknod, dir, name, caller); res < 0) return res;
  {
    ActAsCaller as(caller, fuse_req_ctx(req)->umask);
    if (::mknodat(dir.fd.get(), name, mode, rdev) != 0) return -errno;
  }
  return fs.lookup(dir, name, e);
}

}  // namespace

void op_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  attempt_or_park(req, "mknod", [parent, name = std::string(name), mode, rdev](fuse_req_t req) {
    Filesystem& fs = Filesystem::of(req);
    fuse_entry_param e{};
    int res = do_mknod(req, fs, fs.inode(parent), name.c_str(), mode, rdev, &e);
    if (res < 0) return res;
    fuse_reply_entry(req, &e);
    return 0;
  });
}

}  // namespace leasefs::fuse

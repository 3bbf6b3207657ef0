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
  attempt_or_park(req, "symlink",
                  [link = std::string(link), parent, name = std::string(name)](fuse_req_t req) {
                    Filesystem& fs = Filesystem::of(req);
                    fuse_entry_param e{};
                    int res = do_symlink(req, fs, link.c_str(), fs.inode(parent), name.c_str(), &e);
                    if (res < 0) return res;
                    fuse_reply_entry(req, &e);
                    return 0;
                  });
}

}  // namespace leasefs::fuse

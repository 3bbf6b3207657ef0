#include <fcntl.h>
#include <unistd.h>

#include <optional>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  guarded(req, "unlink", [&] {
    Filesystem& fs = Filesystem::of(req);
    Inode& dir = fs.inode(parent);
    int res = fs.gate_entry(gate::Op::kUnlink, dir, name, Filesystem::caller(req));
    // A temporary sibling that is unlinked is no longer one (nor a leftover).
    std::optional<TempSibling> sibling = res == 0 ? fs.temp_sibling_at(dir, name) : std::nullopt;
    if (res == 0 && ::unlinkat(dir.fd.get(), name, 0) != 0) res = -errno;
    if (res == 0 && sibling) fs.temp_siblings().erase(sibling->dev, sibling->ino);
    fuse_reply_err(req, -res);
  });
}

}  // namespace leasefs::fuse

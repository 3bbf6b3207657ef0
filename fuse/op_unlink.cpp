#include <fcntl.h>
#include <unistd.h>

#include <optional>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  attempt_or_park(req, "unlink", [parent, name = std::string(name)](fuse_req_t req) {
    Filesystem& fs = Filesystem::of(req);
    Inode& dir = fs.inode(parent);
    if (int res = fs.gate_entry(gate::Op::kUnlink, dir, name, Filesystem::caller(req)); res < 0) {
      return res;
    }
    // A temporary sibling that is unlinked is no longer one (nor a leftover).
    std::optional<TempSibling> sibling = fs.temp_sibling_at(dir, name.c_str());
    {
      NamesChanging changing(fs.names());  // cached paths (path_cache.hpp)
      if (::unlinkat(dir.fd.get(), name.c_str(), 0) != 0) return -errno;
    }
    fs.note_name_dropped();
    if (sibling) fs.temp_siblings().erase(sibling->dev, sibling->ino);
    reply_status(req, 0);
    return 0;
  });
}

}  // namespace leasefs::fuse

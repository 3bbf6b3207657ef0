#include <sys/stat.h>

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
    // A temporary sibling whose last name goes is no longer one (nor a leftover);
    // one that keeps its name, the link going, still is.
    std::optional<TempSibling> sibling = fs.temp_sibling_at(dir, name.c_str());
    if (int res = fs.remove_name(dir, name, 0); res < 0) return res;
    struct stat st {};
    if (sibling && (::fstat(sibling->pin->get(), &st) != 0 || st.st_nlink == 0)) {
      fs.temp_siblings().erase(sibling->dev, sibling->ino);
    }
    reply_status(req, 0);
    return 0;
  });
}

}  // namespace leasefs::fuse

#include <unistd.h>

#include "fuse/operations.hpp"
#include "fuse/privilege_bits.hpp"

namespace leasefs::fuse {

// Only the target is a mutation; the source is a read.
void op_copy_file_range(fuse_req_t req, fuse_ino_t /*ino_in*/, off_t off_in, fuse_file_info* fi_in,
                        fuse_ino_t ino_out, off_t off_out, fuse_file_info* fi_out, size_t len,
                        int flags) {
  guarded(req, "copy_file_range", [&] {
    Filesystem& fs = Filesystem::of(req);
    FileHandle& out = handle_of(fi_out);
    if (int res = fs.gate_handle(gate::Op::kCopyFileRange, out, Filesystem::caller(req)); res < 0) {
      return static_cast<void>(reply_status(req, res));
    }
    loff_t in_pos = off_in;
    loff_t out_pos = off_out;
    ssize_t n = ::copy_file_range(handle_of(fi_in).fd.get(), &in_pos, out.fd.get(), &out_pos, len,
                                  static_cast<unsigned>(flags));
    if (n < 0) return static_cast<void>(reply_status(req, -errno));
    if (n > 0) {
      if (int res = drop_privilege_bits(req, ino_out, out.fd.get()); res < 0) {
        return static_cast<void>(reply_status(req, res));
      }
    }
    out.bytes_written.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    fuse_reply_write(req, static_cast<size_t>(n));
  });
}

}  // namespace leasefs::fuse

#include "fuse/operations.hpp"

namespace leasefs::fuse {

// Reads are never gated. The reply names the backing fd and offset, so libfuse
// can splice the data from the file to the kernel without copying it here.
void op_read(fuse_req_t req, fuse_ino_t /*ino*/, size_t size, off_t off, fuse_file_info* fi) {
  guarded(req, "read", [&] {
    fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buf.buf[0].fd = handle_of(fi).fd.get();
    buf.buf[0].pos = off;
    fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
  });
}

}  // namespace leasefs::fuse

// write: every write is asked again, against the snapshot in force now, not the
// one the file was opened under. A descriptor opened under a lease must not write
// after the lease is revoked (I6); the check is one lock-free snapshot read. The
// path asked is the file's current one (gate_handle), not the name it was opened
// under. Writeback of a shared writable mmap arrives here too (fi->writepage):
// stores into such a mapping reach the file only if a lease covers it when the
// kernel writes the pages back, and a refused page is dropped from the cache.
#include "fuse/operations.hpp"
#include "fuse/privilege_bits.hpp"

namespace leasefs::fuse {

void op_write_buf(fuse_req_t req, fuse_ino_t ino, fuse_bufvec* in_buf, off_t off,
                  fuse_file_info* fi) {
  guarded(req, "write", [&] {
    Filesystem& fs = Filesystem::of(req);
    FileHandle& handle = handle_of(fi);
    if (int res = fs.gate_handle(gate::Op::kWrite, handle, Filesystem::caller(req)); res < 0) {
      reply_status(req, res);
      // A refused writeback leaves the refused bytes in the kernel's page: drop it,
      // so no reader through the mount sees them (page_invalidator.hpp).
      if (fi->writepage) fs.pages().later(ino);
      return;
    }
    fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in_buf));
    out.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    out.buf[0].fd = handle.fd.get();
    out.buf[0].pos = off;
    ssize_t n = fuse_buf_copy(&out, in_buf, FUSE_BUF_SPLICE_MOVE);
    if (n < 0) return static_cast<void>(reply_status(req, static_cast<int>(n)));
    // The kernel drops the bits before a write by its own rule, which keeps the
    // setgid bit of a file its group may not execute whoever writes; this is
    // the local file system's rule. Not for writeback of a mapping (no caller,
    // and a store through a mapping drops nothing natively).
    if (n > 0 && !fi->writepage) {
      if (int res = drop_privilege_bits(req, ino, handle.fd.get()); res < 0) {
        return static_cast<void>(reply_status(req, res));
      }
    }
    handle.bytes_written.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    fuse_reply_write(req, static_cast<size_t>(n));
  });
}

}  // namespace leasefs::fuse

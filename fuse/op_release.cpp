#include <fcntl.h>
#include <unistd.h>

#include <memory>

#include "base/no_atime.hpp"
#include "fuse/operations.hpp"

namespace leasefs::fuse {

// Closing a file that was written through a lease tells the control plane (for
// the audit log), with a descriptor to hash the content: the handle's own when
// it can read (every file op_create made), else one reopened read-only; either
// reads without moving the file's access time (base/no_atime.hpp).
void op_release(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi) {
  guarded(req, "release", [&] {
    std::unique_ptr<FileHandle> handle = Filesystem::of(req).disown(req, fi->fh);
    if (!handle) return static_cast<void>(reply_status(req, 0));
    const uint64_t written = handle->bytes_written.load();
    if (written > 0) {
      report::WriteClosed closed;
      closed.path = handle->path;
      closed.bytes_written = written;
      closed.grant_id = handle->grant_id;
      closed.caller = handle->opener;
      const int mode = ::fcntl(handle->fd.get(), F_GETFL);
      if (mode >= 0 && (mode & O_ACCMODE) == O_RDWR) {
        closed.content = std::move(handle->fd);
        base::set_no_atime(closed.content.get(), mode);  // the caller's file is closed
      } else {
        closed.content = base::openat_no_atime(
            AT_FDCWD, Filesystem::fd_path(handle->inode->fd.get()).c_str(), O_RDONLY | O_CLOEXEC);
      }
      Filesystem::of(req).reporter().write_closed(std::move(closed));
    }
    handle.reset();
    reply_status(req, 0);
  });
}

}  // namespace leasefs::fuse

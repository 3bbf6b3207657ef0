// Setuid and setgid bits drop when a caller changes a file's content, as on a
// local file system (the kernel's setattr_should_drop_suidgid()): S_ISUID
// always; S_ISGID when the group may execute, or when the caller is not in the
// file's group; neither when the caller has CAP_FSETID. The daemon changes
// content as root, which keeps them, and without FUSE_HANDLE_KILLPRIV_V2
// (libfuse 3.17; Debian 12 has 3.14) the kernel leaves truncate, O_TRUNC,
// fallocate and copy_file_range to it, so every content change it serves
// ends here. Part of the change, not a separate chmod: no other op class is
// asked.
#pragma once

#include <fuse_lowlevel.h>

namespace leasefs::fuse {

// After the content of regular file `fd` (any descriptor, O_PATH included), the
// inode `ino`, was changed for `req`'s caller. A mode it changes is dropped from
// the kernel's cache: a statx() for the mode alone would not ask again after a
// fallocate. Returns 0 or -errno.
int drop_privilege_bits(fuse_req_t req, fuse_ino_t ino, int fd);

}  // namespace leasefs::fuse

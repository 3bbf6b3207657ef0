// Reopening a file from its file handle. The kernel can answer ENOMEM for a
// handle whose file is gone when another file is being created with the same
// inode number at that moment (ext4 on Linux 6.x: the lookup finds the new
// inode half made, and the file system reports that as an allocation failure).
// The answer a moment later is ESTALE, the right one, so ENOMEM is asked again.
#pragma once

#include <fcntl.h>

#include "base/unique_fd.hpp"

namespace leasefs::base {

// open_by_handle_at(mount_fd, handle, flags), asked again while it answers
// ENOMEM, a bounded number of times. Empty fd and errno as its last answer's.
UniqueFd open_by_handle(int mount_fd, struct file_handle* handle, int flags);

}  // namespace leasefs::base

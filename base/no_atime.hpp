// The daemon's own reads of the tree's files (a pre-image for the journal, the
// audit's hash of a file written, a diff) leave each file's access time as its
// users left it: natively nothing reads the file then, and relatime would move
// its access time past its modification time, which is how a mail reader or
// `find -anewer` tells a file read since it changed. O_NOATIME needs the
// file's owner or CAP_FOWNER; without either the read goes ahead as any read.
#pragma once

#include "base/unique_fd.hpp"

namespace leasefs::base {

// openat(dir_fd, name, flags | O_NOATIME), or without O_NOATIME where it is not
// allowed. Empty fd and errno as openat's otherwise.
UniqueFd openat_no_atime(int dir_fd, const char* name, int flags);

// O_NOATIME on an open description the daemon alone reads from now on;
// `flags` are its status flags (F_GETFL), which the caller has read already.
void set_no_atime(int fd, int flags) noexcept;

}  // namespace leasefs::base

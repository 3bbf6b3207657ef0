// The one place an error reaches the kernel. Every function in fuse/ answers 0
// or -errno, as mergerfs's do; the sign flips here, in the reply, and nowhere
// else, so no positive errno travels between functions.
#pragma once

#include <fuse_lowlevel.h>

#include <cerrno>

namespace leasefs::fuse {

// The filesystem of `req` was told ENOSPC or EDQUOT (filesystem.cpp): the disk's
// reserve goes at once (base/disk_reserve.hpp).
void note_no_space(fuse_req_t req) noexcept;

// `res` is 0 (success, for operations whose reply is only a status) or -errno.
inline void reply_status(fuse_req_t req, int res) noexcept {
  if (res == -ENOSPC || res == -EDQUOT) note_no_space(req);
  fuse_reply_err(req, -res);
}

}  // namespace leasefs::fuse

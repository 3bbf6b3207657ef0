// The one place an error reaches the kernel. Every function in fuse/ answers 0
// or -errno, as mergerfs's do; the sign flips here, in the reply, and nowhere
// else, so no positive errno travels between functions.
#pragma once

#include <fuse_lowlevel.h>

namespace leasefs::fuse {

// `res` is 0 (success, for operations whose reply is only a status) or -errno.
inline void reply_status(fuse_req_t req, int res) noexcept {
  fuse_reply_err(req, -res);
}

}  // namespace leasefs::fuse

#include "base/no_atime.hpp"

#include <errno.h>
#include <fcntl.h>

namespace leasefs::base {

UniqueFd openat_no_atime(int dir_fd, const char* name, int flags) {
  UniqueFd fd(::openat(dir_fd, name, flags | O_NOATIME));
  if (!fd && errno == EPERM) fd.reset(::openat(dir_fd, name, flags));
  return fd;
}

void set_no_atime(int fd, int flags) noexcept {
  (void)::fcntl(fd, F_SETFL, flags | O_NOATIME);
}

}  // namespace leasefs::base

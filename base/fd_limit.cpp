#include "base/fd_limit.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <unistd.h>

namespace leasefs::base {

size_t raise_fd_limit() noexcept {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 1024;
  const rlim_t want = rl.rlim_max == RLIM_INFINITY ? 65536 : rl.rlim_max;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
    rl.rlim_cur = want;
    ::setrlimit(RLIMIT_NOFILE, &rl);
    ::getrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur == RLIM_INFINITY ? size_t{1} << 20 : static_cast<size_t>(rl.rlim_cur);
}

void reserve_fd_table(size_t slots) noexcept {
  if (slots == 0 || slots - 1 > static_cast<size_t>(INT_MAX)) return;
  const int any = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (any < 0) return;
  // The lowest free descriptor at or above slots - 1: the table grows to hold it.
  const int high = ::fcntl(any, F_DUPFD_CLOEXEC, static_cast<int>(slots - 1));
  if (high >= 0) ::close(high);
  ::close(any);
}

}  // namespace leasefs::base

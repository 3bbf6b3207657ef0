#include "base/fd_limit.hpp"

#include <sys/resource.h>

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

}  // namespace leasefs::base

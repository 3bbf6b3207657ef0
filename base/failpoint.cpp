#include "base/failpoint.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace leasefs::base {

bool failpoint_armed(const char* name) noexcept {
  const char* armed = std::getenv("LEASEFS_FAILPOINT");
  return armed != nullptr && std::strcmp(armed, name) == 0;
}

void failpoint(const char* name) noexcept {
  if (failpoint_armed(name)) ::_exit(kFailpointExitCode);
}

}  // namespace leasefs::base

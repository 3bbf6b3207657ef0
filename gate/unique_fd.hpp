// The project's owned file descriptor (defined once, in the lowest layer).
#pragma once

#include "memory/unique_fd.hpp"

namespace leasefs::gate {

using memory::UniqueFd;

}  // namespace leasefs::gate

// A duration as people write it to leasefs ("30s", "10m", "2h"): the largest unit
// and at most the next one ("1h 30m", "2d 4h"), never a bare count of seconds.
// Used wherever a duration is shown: a grant's expiry, ask mode's wait.
#pragma once

#include <cstdint>
#include <string>

namespace leasefs::base {

// Rounded down; "0s" for zero or less, "500ms" under a second.
std::string duration_text(int64_t ms);

}  // namespace leasefs::base

// Wall-clock time in milliseconds since the Unix epoch, as stored in memory.db
// and the audit log.
#pragma once

#include <chrono>
#include <cstdint>

namespace leasefs::base {

inline std::int64_t now_ms() noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace leasefs::base

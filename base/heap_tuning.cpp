#include "base/heap_tuning.hpp"

#include <malloc.h>

namespace leasefs::base {

void keep_freed_heap() noexcept {
  // Fixed values also stop glibc's own adjustment of both, which only ever
  // raises them after large blocks are freed. A failure leaves glibc's defaults.
  constexpr int kMmapThreshold = 1 << 20;
  constexpr int kTrimThreshold = 2 << 20;
  ::mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  ::mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
}

}  // namespace leasefs::base

// When a background writer that gathers work into batches (the audit log's, the
// state log's syncer) writes the next one. Each batch ends in an fdatasync, and
// on ext4 that commits the file system's journal, which every rename, create
// and unlink in the tree then waits on: the first batch after a quiet spell
// waits `gather` for company, but in a burst a batch begins no sooner than
// `every` after the previous one, so a burst costs 1 s / `every` syncs a second.
#pragma once

#include <algorithm>
#include <chrono>

namespace leasefs::base {

struct BatchPacing {
  using Clock = std::chrono::steady_clock;
  std::chrono::milliseconds gather;
  std::chrono::milliseconds every;

  // The batch whose first item came at `first`, the previous batch having
  // begun at `previous` (Clock::time_point{} for none).
  Clock::time_point due(Clock::time_point first, Clock::time_point previous) const {
    return std::max(first + gather, previous + every);
  }
};

}  // namespace leasefs::base

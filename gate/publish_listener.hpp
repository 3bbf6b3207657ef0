// Told of every publication of a gate snapshot, from the publishing thread:
// just before the new snapshot takes effect (the old one still judges), and
// after. The filesystem flushes shared mappings before, and closes its
// temporary siblings after (fuse/filesystem.hpp).
#pragma once

#include "gate/decision.hpp"

namespace leasefs::gate {

class PublishListener {
 public:
  virtual ~PublishListener() = default;
  virtual void on_publishing() noexcept {}
  virtual void on_published(const GateSnapshot& snapshot) noexcept = 0;
};

}  // namespace leasefs::gate

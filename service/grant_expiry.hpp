// A grant with a TTL ends by itself, with nobody calling: the gate refuses what it
// covered from that millisecond, but what the file plane does when a lease ends
// (temporary siblings taken out of the tree, mappings settled) and status.md
// happen at a publication. This thread makes one at every expiry, as a revoke would.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include "base/worker_thread.hpp"

namespace leasefs::service {

class GrantExpiry {
 public:
  // `due` runs on the thread, without this class's lock, once the time set by
  // at() has come.
  explicit GrantExpiry(std::function<void()> due);
  GrantExpiry(const GrantExpiry&) = delete;
  GrantExpiry& operator=(const GrantExpiry&) = delete;

  // The next expiry (wall clock, ms since the epoch); nullopt: none.
  void at(std::optional<int64_t> ms);
  void stop() { worker_.stop(); }

 private:
  void run();

  std::function<void()> due_;
  std::mutex mu_;
  std::optional<int64_t> next_ms_;  // guarded by mu_
  bool changed_ = false;            // guarded by mu_
  base::WorkerThread worker_{mu_};  // last: stopped before the rest goes
};

}  // namespace leasefs::service

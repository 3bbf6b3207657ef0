#include "service/grant_expiry.hpp"

#include <chrono>

#include "base/clock.hpp"

namespace leasefs::service {

GrantExpiry::GrantExpiry(std::function<void()> due) : due_(std::move(due)) {
  worker_.start("grant-expiry", [this] { run(); });
}

void GrantExpiry::at(std::optional<int64_t> ms) {
  {
    std::lock_guard lock(mu_);
    if (next_ms_ == ms) return;
    next_ms_ = ms;
    changed_ = true;
  }
  worker_.wake();
}

void GrantExpiry::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    changed_ = false;
    bool going = true;
    if (!next_ms_) {
      going = worker_.wait(lock, [&] { return changed_; });
    } else if (const int64_t left = *next_ms_ - base::now_ms(); left > 0) {
      // The wall clock may be set meanwhile: look again at least once a minute.
      going = worker_.wait_for(lock, std::chrono::milliseconds(std::min<int64_t>(left, 60'000)),
                               [&] { return changed_; });
    } else {
      next_ms_.reset();
      lock.unlock();
      due_();  // sets the next one through at()
      lock.lock();
      continue;
    }
    if (!going) return;
  }
}

}  // namespace leasefs::service

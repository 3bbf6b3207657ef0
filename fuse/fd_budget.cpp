#include "fuse/fd_budget.hpp"

#include <dirent.h>

#include "base/fd_limit.hpp"

namespace leasefs::fuse {

FdBudget::FdBudget(size_t limit) noexcept
    : limit_(limit), ceiling_(limit > 2 * kReserve ? limit - kReserve : limit / 2) {}

bool FdBudget::try_take() noexcept {
  size_t cur = in_use_.load(std::memory_order_relaxed);
  do {
    if (cur >= ceiling_) return false;
  } while (!in_use_.compare_exchange_weak(cur, cur + 1, std::memory_order_relaxed));
  return true;
}

bool FdBudget::take_reclaiming() noexcept {
  while (!try_take()) {
    std::lock_guard lock(reclaim_mu_);
    if (!reclaimer_ || !reclaimer_()) return false;
  }
  return true;
}

void FdBudget::set_reclaimer(std::function<bool()> fn) {
  std::lock_guard lock(reclaim_mu_);
  reclaimer_ = std::move(fn);
}

void FdBudget::give_back() noexcept {
  in_use_.fetch_sub(1, std::memory_order_relaxed);
}

FdBudget& fd_budget() noexcept {
  static FdBudget budget(base::raise_fd_limit());
  return budget;
}

size_t count_open_fds() noexcept {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return 0;
  size_t n = 0;
  while (struct dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n > 0 ? n - 1 : 0;  // not the one opendir just used
}

}  // namespace leasefs::fuse

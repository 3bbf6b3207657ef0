#include "fuse/wakeup_signal.hpp"

#include <mutex>

namespace leasefs::fuse {

namespace {
void ignore_signal(int) {}
}  // namespace

void install_wakeup_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = ignore_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: the interrupted call returns EINTR
    sigaction(kWakeupSignal, &sa, nullptr);
  });
}

}  // namespace leasefs::fuse

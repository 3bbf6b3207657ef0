#include "fuse/transport.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace leasefs::fuse {

const char* transport_name(Transport t) noexcept {
  return t == Transport::kIoUring ? "io_uring" : "dev_fuse";
}

bool kernel_offers_io_uring() noexcept {
  const int fd = ::open("/sys/module/fuse/parameters/enable_uring", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char c = 0;
  const bool yes = ::read(fd, &c, 1) == 1 && (c == 'Y' || c == 'y' || c == '1');
  ::close(fd);
  return yes;
}

void TransportInUse::first_on_thread(fuse_req_t req) noexcept {
#if LEASEFS_FUSE_IO_URING
  if (!fuse_req_is_uring(req)) return;
  // libfuse ends a ring thread with pthread_cancel right after waking it, and
  // runs requests on it with cancellation enabled (its /dev/fuse workers turn it
  // off): a cancel landing in a handler's write() or open() would unwind through
  // noexcept code and abort the daemon. Off, the thread leaves through its own
  // loop, which the same wake-up ends.
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, nullptr);
  if (!ring_.exchange(true)) spdlog::info("FUSE requests are served over io_uring");
#else
  (void)req;
#endif
}

}  // namespace leasefs::fuse

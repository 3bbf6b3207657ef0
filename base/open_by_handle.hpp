// Reopening a file from its file handle. The kernel can answer ENOMEM for a
// handle whose file is gone when another file is being made with the same
// inode number at that moment (ext4 on Linux 6.x: the lookup finds the new
// inode half made, and the file system reports that as an allocation failure).
// The window lasts as long as the maker waits, for the journal's commit say:
// seen here up to a millisecond under fsync load. The answer after it is
// ESTALE, the right one, so ENOMEM is asked again for a while.
#pragma once

#include <fcntl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "base/unique_fd.hpp"

namespace leasefs::base {

// open_by_handle_at(mount_fd, handle, flags), asked again while it answers
// ENOMEM, for up to a second. Empty fd and errno as its last answer's.
UniqueFd open_by_handle(int mount_fd, struct file_handle* handle, int flags);

// `ask()` (an fd, or -1 with errno set) asked again while it fails with
// ENOMEM, at once a few times, then with pauses that double, until `patience`
// has passed. A real shortage of memory still fails, late.
template <class Ask>
UniqueFd ask_while_out_of_memory(Ask ask, std::chrono::microseconds patience) {
  UniqueFd fd(ask());
  if (fd || errno != ENOMEM) return fd;  // the clock is read only past here
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + patience;
  std::chrono::microseconds pause{20};
  for (int asked = 2;; ++asked) {
    if (asked > 8) {
      const timespec ts{0, static_cast<long>(pause.count()) * 1000};
      ::nanosleep(&ts, nullptr);
      pause = std::min(pause * 2, std::chrono::microseconds{5000});
    }
    fd = UniqueFd(ask());
    if (fd || errno != ENOMEM || Clock::now() >= until) return fd;
  }
}

}  // namespace leasefs::base

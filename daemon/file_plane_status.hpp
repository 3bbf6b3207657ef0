// The `file_plane` object of `leasefs mount`'s status: the daemon's descriptors
// against its budget, the inode cache, the transport, and the processes an
// --allow-busy mount left writing beneath it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "base/would_block.hpp"
#include "fuse/fd_budget.hpp"
#include "fuse/filesystem.hpp"

namespace leasefs::daemon {

// The tree was mounted over with --allow-busy while processes reached it; they
// are looked for again on every status while any lives.
struct BusyWatch {
  bool watch = false;  // mounted over a busy root with --allow-busy
  std::string root;
  dev_t dev = 0;
};

// The daemon's open descriptors for status, read from /proc/self/fd at most once
// a second: with thousands of inode fds cached a scan is not free, and status
// may be asked many times a second. A scan of more than kScannedOnTheLoop
// entries is left to a thread that may wait (base/would_block.hpp).
class OpenFdCount {
 public:
  size_t get() {
    auto lock = base::lock_or_would_block(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (counted_ && now - at_ < std::chrono::seconds(1)) return n_;
    if (fuse::fd_budget().in_use() > kScannedOnTheLoop) base::would_block_here();
    n_ = fuse::count_open_fds();
    at_ = now;
    counted_ = true;
    return n_;
  }

 private:
  static constexpr size_t kScannedOnTheLoop = 1024;
  std::mutex mu_;
  bool counted_ = false;
  std::chrono::steady_clock::time_point at_;
  size_t n_ = 0;
};

nlohmann::json file_plane_status(const fuse::Filesystem& fs, const BusyWatch& busy,
                                 OpenFdCount& open_fds);

}  // namespace leasefs::daemon

// One mount of the passthrough: creates the FUSE session, mounts it, runs the
// multithreaded loop, and takes it all down again. Used by the daemon, the test
// fixture and the benchmark mount.
#pragma once

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "fuse/filesystem.hpp"

struct fuse_session;

namespace leasefs::fuse {

struct MountOptions {
  std::string fsname;  // shown as the source in /proc/self/mountinfo (the root path)
  bool allow_other = true;
  bool debug = false;
  unsigned max_threads = 16;
  // Mount with mount(2) on top of what is at the mount point (a dead leasefs
  // mount, see fuse/takeover.hpp) instead of through libfuse, which stats the
  // mount point first and so cannot mount over a dead one.
  bool on_top = false;
  // Standard mount options from `-o`, checked by fuse/mount_options.hpp.
  std::vector<std::string> kernel_options;
  // Ask for fuse-over-io_uring when libfuse has it and the kernel offers it
  // (transport.hpp); otherwise, or when off, requests come over /dev/fuse.
  bool io_uring = true;
};

class Session {
 public:
  // Mounts `fs` at `mountpoint`; throws std::runtime_error with a message.
  Session(Filesystem& fs, std::string mountpoint, const MountOptions& options);
  ~Session();  // stop() + unmount + destroy
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Serves requests until stop() or an external unmount. Returns 0 or -errno.
  int run();
  // Makes run() return: sets the exit flag, ends every wait in flock()
  // (lock_waits.hpp) and interrupts the thread in run() with kWakeupSignal
  // (wakeup_signal.hpp), whose loop then cancels its idle workers. Safe from any thread but a
  // filesystem worker, more than once, and before run() starts. Does not unmount.
  void stop() noexcept;
  // Lazily detaches the mount; idempotent. Processes still inside see ENOTCONN
  // once the session is gone.
  void unmount() noexcept;

  const std::string& mountpoint() const noexcept { return mountpoint_; }
  // Whether io_uring was asked for at mount; the kernel answers at INIT, and
  // Filesystem::transport() says what serves.
  bool asked_io_uring() const noexcept { return asked_io_uring_; }
  fuse_session* raw() noexcept { return se_; }

 private:
  Filesystem& fs_;
  fuse_session* se_ = nullptr;
  std::string mountpoint_;
  unsigned max_threads_;
  bool asked_io_uring_ = false;
  std::atomic<bool> mounted_{false};  // unmount() may come from the signal thread
  std::string on_top_device_;         // set when mounted on top: our entry's device in mountinfo
  std::mutex run_mu_;
  bool stopping_ = false;  // guarded by run_mu_
  pthread_t runner_{};     // guarded by run_mu_
  bool running_ = false;   // guarded by run_mu_
};

// Escapes ',' and '\' for a -o option value.
std::string escape_option(std::string_view value);

}  // namespace leasefs::fuse

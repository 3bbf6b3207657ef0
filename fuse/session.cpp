#include "fuse/session.hpp"

#include <fuse_lowlevel.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/mountinfo.hpp"
#include "fuse/mount_options.hpp"
#include "fuse/operations.hpp"
#include "fuse/takeover.hpp"
#include "fuse/transport.hpp"
#include "fuse/wakeup_signal.hpp"

namespace leasefs::fuse {

std::string escape_option(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == ',' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

Session::Session(Filesystem& fs, std::string mountpoint, const MountOptions& options)
    : fs_(fs), mountpoint_(std::move(mountpoint)), max_threads_(options.max_threads) {
  std::string opts = "fsname=" + escape_option(options.fsname) + ",subtype=leasefs";
  if (options.allow_other) opts += ",allow_other";
  opts += ",default_permissions";
  for (const std::string& option : options.kernel_options) opts += "," + option;
  asked_io_uring_ = kBuiltWithIoUring && options.io_uring && kernel_offers_io_uring();
  if (asked_io_uring_) {
    opts += ",io_uring,io_uring_q_depth=" + std::to_string(kRingQueueDepth);
    // Parked requests keep their ring entries: never all of a queue's.
    fs_.parked().set_max_parked(kRingMaxParked);
    spdlog::debug("asking the kernel for fuse-over-io_uring ({} entries per CPU queue)",
                  kRingQueueDepth);
  } else {
    spdlog::info("FUSE requests are served over /dev/fuse ({})",
                 !kBuiltWithIoUring  ? "built without io_uring: libfuse < 3.18"
                 : !options.io_uring ? "--no-io-uring"
                                     : "the kernel's enable_uring is N");
  }
  std::vector<std::string> argv_store = {"leasefs", "-o", opts};
  if (options.debug) argv_store.push_back("-d");
  std::vector<char*> argv;
  for (auto& a : argv_store) argv.push_back(a.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  const fuse_lowlevel_ops ops = make_operations();
  se_ = fuse_session_new(&args, &ops, sizeof ops, &fs);
  fuse_opt_free_args(&args);
  if (!se_) throw std::runtime_error("cannot create the FUSE session (bad options?)");
  if (options.on_top) {
    std::string error;
    base::UniqueFd dev = mount_fuse_on_top(mountpoint_, options.fsname, options.allow_other,
                                           mount_flags(options.kernel_options), &error);
    if (!dev) {
      fuse_session_destroy(se_);
      se_ = nullptr;
      throw std::runtime_error(error);
    }
    if (auto top = base::leasefs_mount_at(mountpoint_)) on_top_device_ = top->device;
    // "/dev/fd/N": libfuse serves a connection mounted by its caller, and owns N.
    const std::string dev_path = "/dev/fd/" + std::to_string(dev.release());
    if (fuse_session_mount(se_, dev_path.c_str()) != 0) {
      fuse_session_destroy(se_);
      se_ = nullptr;
      throw std::runtime_error("cannot serve the FUSE mount over " + mountpoint_);
    }
    mounted_ = true;
    fs_.attach_session(se_);  // its caches are dropped as a first mount's are
    return;
  }
  if (fuse_session_mount(se_, mountpoint_.c_str()) != 0) {
    fuse_session_destroy(se_);
    se_ = nullptr;
    throw std::runtime_error("cannot mount FUSE at " + mountpoint_ +
                             " (is /dev/fuse available, and user_allow_other set?)");
  }
  mounted_ = true;
  fs_.attach_session(se_);
}

Session::~Session() {
  if (!se_) return;
  fs_.attach_session(nullptr);
  unmount();
  fuse_session_destroy(se_);
}

int Session::run() {
  install_wakeup_handler();
  {
    std::lock_guard lock(run_mu_);
    if (stopping_) return 0;
    runner_ = pthread_self();
    running_ = true;
  }
  fuse_loop_config* config = fuse_loop_cfg_create();
  fuse_loop_cfg_set_clone_fd(config, 0);
  fuse_loop_cfg_set_max_threads(config, max_threads_);
  fuse_loop_cfg_set_idle_threads(config, 4);
  int res = fuse_session_loop_mt(se_, config);
  fuse_loop_cfg_destroy(config);
  // Every request still parked for a person gets its answer while the session
  // can still carry it.
  fs_.parked().stop();
  std::lock_guard lock(run_mu_);
  running_ = false;
  return res;
}

void Session::stop() noexcept {
  install_wakeup_handler();
  {
    std::lock_guard lock(run_mu_);
    stopping_ = true;
    if (!se_) return;
    fuse_session_exit(se_);
  }
  // A worker waiting in flock() for the agent would keep the loop from joining it.
  fs_.lock_waits().stop();
  // The loop may be between its exit check and sem_wait() when a signal lands;
  // repeat until it is seen to return (up to ~5 s).
  for (int i = 0; i < 250; ++i) {
    {
      std::lock_guard lock(run_mu_);
      if (!running_) return;
      pthread_kill(runner_, kWakeupSignal);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void Session::unmount() noexcept {
  if (!mounted_.exchange(false)) return;
  if (!on_top_device_.empty()) {
    // Only our own entry, and only while it is the top one: after an external
    // unmount the next mount down is a dead one that must stay, failing closed.
    auto top = base::leasefs_mount_at(mountpoint_);
    if (top && top->device == on_top_device_) ::umount2(mountpoint_.c_str(), MNT_DETACH);
    return;
  }
  fuse_session_unmount(se_);
}

}  // namespace leasefs::fuse

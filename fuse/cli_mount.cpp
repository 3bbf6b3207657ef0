// `leasefs mount ROOT [MOUNTPOINT]`.
//
// Order matters: check everything that can be checked before touching anything;
// clear a dead mount left by a crash; fork (unless --foreground) before any
// thread exists; open the root *before* mounting over it, so the daemon keeps a
// way to the tree underneath; take the root (Runtime: lock, state, memory); mount;
// open the control socket; and only then say "ready" - through a pipe to the
// parent that is waiting to print it, or to systemd.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "fuse/cli.hpp"
#include "fuse/filesystem.hpp"
#include "fuse/mount_table.hpp"
#include "fuse/session.hpp"
#include "gate/control/runtime.hpp"
#include "gate/error.hpp"
#include "gate/longrun_dir.hpp"

namespace leasefs::fuse {

namespace {

std::optional<std::string> real_path(const std::string& path, std::string* error) {
  char buf[PATH_MAX];
  if (!::realpath(path.c_str(), buf)) {
    *error = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  return std::string(buf);
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A leasefs mount at `path`: cleared if dead, an error if alive.
bool check_existing_mount(const std::string& path, const std::string& root, std::string* error) {
  if (!leasefs_mount_at(path)) return true;
  // statfs always reaches the daemon (stat may be answered from the attr cache).
  struct statfs sfs {};
  if (::statfs(path.c_str(), &sfs) != 0 && errno == ENOTCONN) {
    std::fprintf(stderr, "note: %s is a dead leasefs mount (its daemon ended); clearing it\n",
                 path.c_str());
    if (!fusermount({"-uz"}, path)) {
      *error = "cannot clear the dead mount at " + path + " (fusermount3 -uz failed)";
      return false;
    }
    return true;
  }
  pid_t pid = 0;
  gate::UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (fd) pid = gate::LongrunDir::lock_holder(fd.get());
  *error = root + " is already served by leasefs" +
           (pid > 0 ? " (pid " + std::to_string(pid) + ")" : std::string()) +
           "; stop it with `leasefs unmount " + path + "`";
  return false;
}

// Reports the outcome to whoever waits: the parent through a pipe ("OK ..." or
// "ERR ..."), systemd through sd_notify.
class Reporter {
 public:
  explicit Reporter(int fd) : fd_(fd) {}
  void ok(const std::string& text) { send("OK " + text); }
  void error(const std::string& text) { send("ERR " + text); }

 private:
  void send(const std::string& msg) {
    if (fd_ < 0) {
      std::fprintf(msg[0] == 'O' ? stdout : stderr, "%s\n",
                   msg[0] == 'O' ? msg.c_str() + 3 : ("error: " + msg.substr(4)).c_str());
      std::fflush(stdout);
      return;
    }
    size_t off = 0;
    while (off < msg.size()) {
      ssize_t n = ::write(fd_, msg.data() + off, msg.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    ::close(fd_);
    fd_ = -1;
    done_ = true;
  }
  int fd_;
  bool done_ = false;
};

// The parent's side of a background start: wait for the child's report.
int wait_for_child(int fd) {
  std::string msg;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
  ::close(fd);
  if (msg.rfind("OK ", 0) == 0) {
    std::printf("%s\n", msg.c_str() + 3);
    return 0;
  }
  if (msg.rfind("ERR ", 0) == 0) {
    std::fprintf(stderr, "error: %s\n", msg.c_str() + 4);
  } else {
    std::fprintf(stderr, "error: the daemon ended before it was ready\n");
  }
  return 1;
}

int serve(const MountCommand& cmd, const std::string& root, const std::string& mountpoint,
          Reporter& report) {
  // Signals are taken by one thread with sigwait; block them before any thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  gate::UniqueFd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd) {
    report.error("cannot open " + root + ": " + std::strerror(errno));
    return 1;
  }
  gate::RuntimeOptions ro;
  ro.socket_path = cmd.socket;
  ro.approver_uids = cmd.approver_uids;
  ro.approver_gids = cmd.approver_gids;
  if (!cmd.socket_group.empty()) {
    struct group* g = ::getgrnam(cmd.socket_group.c_str());
    if (!g) {
      report.error("unknown group " + cmd.socket_group);
      return 1;
    }
    ro.socket_gid = g->gr_gid;
  }
  try {
    gate::Runtime runtime(root_fd.get(), root, ro);
    if (!cmd.foreground) {
      // A detached daemon logs to .longrun/daemon.log (two files of 4 MiB at most);
      // errors before it is ready still reach the terminal through the report.
      try {
        spdlog::set_default_logger(spdlog::rotating_logger_mt(
            "leasefs", runtime.longrun_path("daemon.log"), size_t{4} << 20, 1));
        spdlog::flush_on(spdlog::level::info);
      } catch (const std::exception& e) {
        spdlog::warn("no log file: {}", e.what());
      }
    }
    Filesystem fs(root_fd.get(), runtime.gate());
    MountOptions mo;
    mo.fsname = root;
    mo.debug = cmd.debug_fuse;
    mo.allow_other = ::geteuid() == 0;
    Session session(fs, mountpoint, mo);
    runtime.start_control();

    // On a signal: detach the mount first, while its loop still answers, so that
    // nothing the daemon does afterwards (closing SQLite, the last audit batch, a
    // log line) can reach its own mount and wait on a loop that has stopped; then
    // stop the control plane (fail closed: no grant survives it), then the loop.
    std::thread signal_waiter([&] {
      int sig = 0;
      sigwait(&stop_signals, &sig);
      if (sig != 0) spdlog::info("signal {}: unmounting {}", sig, mountpoint);
      session.unmount();
      runtime.stop();
      session.stop();
    });
    report.ok("mounted " + root + " at " + mountpoint + " (socket " + runtime.socket_path() + ")");
    if (cmd.foreground) {
      sd_notify(0, "READY=1");
    } else {
      // Detached: nothing should write to the terminal we were started from.
      int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
      if (devnull >= 0) {
        ::dup2(devnull, 0);
        ::dup2(devnull, 1);
        ::dup2(devnull, 2);
        ::close(devnull);
      }
    }
    int res = session.run();
    sd_notify(0, "STOPPING=1");
    spdlog::info("leaving {} (loop ended: {})", mountpoint, res);
    runtime.stop();
    session.unmount();
    // Wake the signal thread if the loop ended for another reason (external unmount).
    pthread_kill(signal_waiter.native_handle(), SIGTERM);
    signal_waiter.join();
    return 0;
  } catch (const gate::Error& e) {
    report.error(e.what());
  } catch (const std::exception& e) {
    report.error(e.what());
  }
  return 1;
}

}  // namespace

int run_mount(const MountCommand& cmd) {
  spdlog::set_level(spdlog::level::from_str(cmd.log_level));
  std::string error;
  auto fail = [&](const std::string& msg) {
    std::fprintf(stderr, "error: %s\n", msg.c_str());
    return 1;
  };

  // The root may itself be a dead leasefs mount (crash while mounted over it):
  // realpath() would fail with ENOTCONN, so look at the mount table first.
  if (char abs[PATH_MAX]; cmd.root.empty() || cmd.root[0] != '/') {
    if (!::getcwd(abs, sizeof abs)) return fail("cannot read the current directory");
    std::string guess = std::string(abs) + "/" + cmd.root;
    if (leasefs_mount_at(guess) && !check_existing_mount(guess, guess, &error)) return fail(error);
  } else if (leasefs_mount_at(cmd.root) && !check_existing_mount(cmd.root, cmd.root, &error)) {
    return fail(error);
  }

  auto root = real_path(cmd.root, &error);
  if (!root) return fail("root " + error);
  if (!is_dir(*root)) return fail("root " + *root + " is not a directory");
  std::string mountpoint = *root;
  if (!cmd.mountpoint.empty()) {
    auto mp = real_path(cmd.mountpoint, &error);
    if (!mp) return fail("mountpoint " + error);
    if (!is_dir(*mp)) return fail("mountpoint " + *mp + " is not a directory");
    mountpoint = *mp;
  }
  if (::access("/dev/fuse", R_OK | W_OK) != 0) {
    return fail(std::string("/dev/fuse is not available: ") + std::strerror(errno) +
                " (is the fuse module loaded, and is /dev/fuse passed to this container?)");
  }
  if (!check_existing_mount(*root, *root, &error)) return fail(error);
  if (mountpoint != *root && !check_existing_mount(mountpoint, *root, &error)) return fail(error);

  if (cmd.foreground) {
    Reporter report(-1);
    return serve(cmd, *root, mountpoint, report);
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return fail(std::string("fork: ") + std::strerror(errno));
  if (pid > 0) {
    ::close(fds[1]);
    return wait_for_child(fds[0]);
  }
  ::close(fds[0]);
  ::setsid();
  Reporter report(fds[1]);
  ::_exit(serve(cmd, *root, mountpoint, report));
}

}  // namespace leasefs::fuse

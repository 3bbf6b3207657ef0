// `leasefs mount ROOT [MOUNTPOINT]`.
//
// Order matters: check everything that can be checked before touching anything;
// take over a dead mount left by a crash on top of it, never by clearing it
// first (fuse/takeover.hpp); fork (unless --foreground) before any
// thread exists; open the root *before* mounting over it, so the daemon keeps a
// way to the tree underneath; take the root (Runtime: lock, state, memory); mount;
// open the control socket; and only then say "ready" - through a pipe to the
// parent that is waiting to print it, or to systemd.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/error.hpp"
#include "base/fd_limit.hpp"
#include "base/would_block.hpp"
#include "daemon/busy_root.hpp"
#include "daemon/cli.hpp"
#include "daemon/cli_agent.hpp"
#include "daemon/file_plane_status.hpp"
#include "daemon/git_exclude.hpp"
#include "daemon/mount_table.hpp"
#include "daemon/mount_watch.hpp"
#include "daemon/mounted_roots.hpp"
#include "daemon/runtime.hpp"
#include "fuse/fd_budget.hpp"
#include "fuse/filesystem.hpp"
#include "fuse/mount_options.hpp"
#include "fuse/session.hpp"
#include "fuse/takeover.hpp"
#include "protocol/daemon_registry.hpp"
#include "state/longrun_dir.hpp"

namespace leasefs::daemon {

namespace {

// The descriptor table's size at start: room for the inode cache's 8,192
// descriptors (fuse/inode_fd.hpp), the open files and the connections.
constexpr size_t kFdTableAtStart = 16384;

std::optional<std::string> real_path(const std::string& path, std::string* error) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) return std::string(buf);
  // A dead mount on the last component: canonicalize its parent, keep the name.
  const int err = errno;
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const size_t slash = trimmed.rfind('/');
  const std::string parent =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : trimmed.substr(0, slash));
  const std::string name = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  if (err == ENOTCONN && name != "." && name != ".." && ::realpath(parent.c_str(), buf)) {
    std::string candidate = std::string(buf) + (std::string(buf) == "/" ? "" : "/") + name;
    if (fuse::dead_leasefs_mount(candidate)) return candidate;
  }
  *error = path + ": " + std::strerror(err);
  return std::nullopt;
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return fuse::dead_leasefs_mount(path) || (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
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

// What run_mount() checked and serve() carries out.
struct MountPlan {
  explicit MountPlan(const MountCommand& command) : cmd(command) {}

  const MountCommand& cmd;
  std::string root;
  std::string mountpoint;
  std::optional<AgentUser> agent;
  bool root_dead = false;        // the root is a dead leasefs mount (taken over)
  bool mountpoint_dead = false;  // so is the mountpoint: mounted on top of it
  BusyWatch busy;
  std::vector<std::string> kernel_options;
};

// Signals are taken by one thread with sigwait; blocked before any thread exists.
sigset_t block_stop_signals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return stop_signals;
}

// The tree, reached beneath a dead mount over it when taking that over.
base::UniqueFd open_root(const MountPlan& plan, Reporter& report) {
  base::UniqueFd root_fd;
  if (plan.root_dead) {
    std::string error;
    root_fd = fuse::open_beneath_mounts(plan.root, &error);
    if (!root_fd) {
      report.error(error +
                   "; to serve it again, stop every agent process, then run `leasefs "
                   "unmount " +
                   plan.root + "` (which exposes the tree) and mount again");
      return root_fd;
    }
  } else {
    root_fd = base::UniqueFd(::open(plan.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  if (!root_fd) report.error("cannot open " + plan.root + ": " + std::strerror(errno));
  return root_fd;
}

// The runtime's options from the command line; nullopt once an error is reported.
std::optional<RuntimeOptions> runtime_options(const MountPlan& plan, Reporter& report) {
  const MountCommand& cmd = plan.cmd;
  RuntimeOptions ro;
  ro.socket_path = cmd.socket;
  ro.approver_uids = cmd.approver_uids;
  ro.approver_gids = cmd.approver_gids;
  ro.ask_ms = cmd.ask_ms;
  if (!cmd.signing_key.empty()) ro.signing_key_path = cmd.signing_key;
  ro.journal.enabled = cmd.journal != "off";
  ro.journal.max_file_bytes = cmd.journal_max_file_mb << 20;
  ro.journal.max_turn_bytes = cmd.journal_max_turn_mb << 20;
  ro.journal.keep_turns = cmd.journal_keep_turns;
  ro.journal.keep_bytes = cmd.journal_keep_mb << 20;
  if (cmd.no_default_protect) ro.protected_globs.clear();
  for (const std::string& glob : cmd.protect) {
    std::string why;
    std::string normalized = gate::normalize_protected_glob(glob, &why);
    if (normalized.empty()) {
      report.error("--protect '" + glob + "': " + why);
      return std::nullopt;
    }
    if (std::find(ro.protected_globs.begin(), ro.protected_globs.end(), normalized) ==
        ro.protected_globs.end()) {
      ro.protected_globs.push_back(std::move(normalized));
    }
  }
  if (plan.agent) {
    // The agent's group reads status.md and reaches the socket; nothing the daemon
    // creates is anyone else's (FUSE workers keep their own umask, see filesystem.cpp).
    ::umask(077);
    ro.agent_gid = plan.agent->gid;
    ro.socket_gid = plan.agent->gid;
  }
  if (!cmd.socket_group.empty()) {
    struct group* g = ::getgrnam(cmd.socket_group.c_str());
    if (!g) {
      report.error("unknown group " + cmd.socket_group);
      return std::nullopt;
    }
    ro.socket_gid = g->gr_gid;
  }
  return ro;
}

// A detached daemon logs to .longrun/daemon.log (two files of 4 MiB at most);
// errors before it is ready still reach the terminal through the report.
void log_to_file(Runtime& runtime) {
  try {
    spdlog::set_default_logger(spdlog::rotating_logger_mt(
        "leasefs", runtime.longrun_path("daemon.log"), size_t{4} << 20, 1));
    spdlog::flush_on(spdlog::level::info);
  } catch (const std::exception& e) {
    spdlog::warn("no log file: {}", e.what());
  }
}

// The registry's entry of this daemon; a clean stop removes it.
struct Registered {
  std::string path;
  ~Registered() { protocol::unregister_daemon(path); }
};

// Clients find this daemon in the registry, never through the tree
// (protocol/daemon_registry.hpp).
void register_here(const MountPlan& plan, const Runtime& runtime,
                   const std::optional<base::MountEntry>& own_mount, Registered& registered) {
  if (const std::string dir = protocol::registry_dir(::geteuid()); !own_mount) {
    spdlog::warn("own mount at {} not found in /proc/self/mountinfo: not registered",
                 plan.mountpoint);
  } else if (dir.empty()) {
    spdlog::warn("no XDG_RUNTIME_DIR: not registered; clients need --socket {}",
                 runtime.socket_path());
  } else {
    try {
      registered.path = protocol::register_daemon(
          dir, {::getpid(), ::geteuid(), own_mount->mount_id, own_mount->device, plan.mountpoint,
                plan.root, runtime.socket_path()});
    } catch (const std::exception& e) {
      spdlog::warn("not registered: {}; clients need --socket {}", e.what(), runtime.socket_path());
    }
  }
}

// Detached: nothing should write to the terminal we were started from.
void detach_stdio() {
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) {
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::close(devnull);
  }
}

// Mounts `fs`, opens the control socket, says "ready", and serves until a
// signal or an unmount ends the loop.
int run_session(const MountPlan& plan, fuse::Filesystem& fs, Runtime& runtime,
                const sigset_t& stop_signals, Reporter& report) {
  const std::string& root = plan.root;
  const std::string& mountpoint = plan.mountpoint;
  // The mount table as it is before our mount: what appears later over the
  // tree, by a user no approver is, ends every lease (daemon/mount_watch.hpp).
  std::vector<uid_t> trusted = {0, ::geteuid()};
  trusted.insert(trusted.end(), plan.cmd.approver_uids.begin(), plan.cmd.approver_uids.end());
  MountWatch mount_watch(mountpoint == root ? std::vector<std::string>{root}
                                            : std::vector<std::string>{root, mountpoint},
                         trusted);
  fuse::MountOptions mo;
  mo.fsname = root;
  mo.debug = plan.cmd.debug_fuse;
  mo.io_uring = !plan.cmd.no_io_uring;
  mo.allow_other = ::geteuid() == 0;
  mo.on_top = plan.mountpoint_dead;
  mo.kernel_options = plan.kernel_options;
  fuse::Session session(fs, mountpoint, mo);
  runtime.start_control();
  const auto own_mount = mount_watch.start(
      mountpoint, [&runtime](auto mounts) { runtime.set_foreign_mounts(std::move(mounts)); });
  Registered registered;
  register_here(plan, runtime, own_mount, registered);

  std::thread signal_waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (sig != 0) spdlog::info("signal {}: unmounting {}", sig, mountpoint);
    // Detach the mount first, while its loop still answers, so that nothing the
    // daemon does afterwards (closing SQLite, the last audit batch, a log line)
    // can reach its own mount and wait on a loop that has stopped; then stop the
    // control plane (fail closed: no grant survives it), then the loop.
    protocol::unregister_daemon(registered.path);
    mount_watch.stop();
    session.unmount();
    runtime.stop();
    session.stop();
  });
  report.ok("mounted " + root + " at " + mountpoint + " (socket " + runtime.socket_path() + ")");
  if (plan.cmd.foreground) {
    sd_notify(0, "READY=1");
  } else {
    detach_stdio();
  }
  int res = session.run();
  sd_notify(0, "STOPPING=1");
  spdlog::info("leaving {} (loop ended: {})", mountpoint, res);
  protocol::unregister_daemon(registered.path);
  mount_watch.stop();
  runtime.stop();
  session.unmount();
  // Wake the signal thread if the loop ended for another reason (external unmount).
  pthread_kill(signal_waiter.native_handle(), SIGTERM);
  signal_waiter.join();
  return 0;
}

// The file plane over `root_fd`, tied to the runtime for as long as it lives.
int serve_files(const MountPlan& plan, int root_fd, Runtime& runtime, const sigset_t& stop_signals,
                Reporter& report) {
  fuse::FsOptions fso;
  // Over the root with nobody left inside, names change only through the mount
  // and undo: a write may be judged by a cached path (fuse/path_cache.hpp).
  fso.stable_names = plan.mountpoint == plan.root && !plan.busy.watch;
  fso.passthrough_reads = plan.cmd.passthrough_reads;
  fuse::Filesystem fs(root_fd, runtime.gate(), runtime.reporter(), fso);
  fs.set_journal(runtime.journal());
  fs.set_disk_reserve(&runtime.disk_reserve());
  fs.attach_asks(&runtime.asks());
  OpenFdCount open_fds;
  const BusyWatch& busy = plan.busy;
  runtime.set_file_plane_status(
      [&fs, &busy, &open_fds] { return file_plane_status(fs, busy, open_fds); });
  runtime.set_undo_touch([&fs](const std::string& path) { fs.drop_cached(path); });
  if (busy.watch) {
    spdlog::warn(
        "mounted over {} with --allow-busy: processes already inside keep ungated "
        "access beneath the mount",
        plan.root);
  }
  // Once a second, and at once after an ENOSPC: deleted files are let go.
  runtime.disk_reserve().start([&fs] { fs.release_deleted(); },
                               [&runtime] { runtime.disk_changed(); });
  struct ForgetFs {  // status must not reach `fs` once it is gone
    Runtime& runtime;
    ~ForgetFs() {
      runtime.disk_reserve().stop();
      runtime.set_file_plane_status(nullptr);
      runtime.set_undo_touch(nullptr);
    }
  } forget_fs{runtime};
  return run_session(plan, fs, runtime, stop_signals, report);
}

int serve(const MountPlan& plan, Reporter& report) {
  const sigset_t stop_signals = block_stop_signals();
  fuse::fd_budget();  // raises RLIMIT_NOFILE to the hard limit before anything opens
  // Before any thread: the inode cache's descriptors and the open files then
  // fit in the table without its growing under a request (base/fd_limit.hpp).
  base::reserve_fd_table(std::min(fuse::fd_budget().limit(), kFdTableAtStart));
  base::UniqueFd root_fd = open_root(plan, report);
  if (!root_fd) return 1;
  std::optional<RuntimeOptions> ro = runtime_options(plan, report);
  if (!ro) return 1;
  try {
    Runtime runtime(root_fd.get(), plan.root, *ro);
    if (!plan.cmd.foreground) log_to_file(runtime);
    if (auto done = exclude_longrun_from_git(root_fd.get())) spdlog::info("{}", *done);
    return serve_files(plan, root_fd.get(), runtime, stop_signals, report);
  } catch (const Error& e) {
    report.error(e.what());
  } catch (const std::exception& e) {
    report.error(e.what());
  }
  return 1;
}

// The root and the mountpoint, canonical. The root may itself be a dead
// leasefs mount (crash while mounted over it): real_path() then names it
// through its parent, without touching it. An error, or nullopt.
std::optional<std::string> resolve_paths(MountPlan& plan) {
  std::string error;
  auto root = real_path(plan.cmd.root, &error);
  if (!root) return "root " + error;
  if (!is_dir(*root)) return "root " + *root + " is not a directory";
  plan.kernel_options = fuse::check_mount_options(plan.cmd.mount_options, &error);
  if (!error.empty()) return error;
  plan.root = *root;
  plan.mountpoint = *root;
  if (!plan.cmd.mountpoint.empty()) {
    auto mp = real_path(plan.cmd.mountpoint, &error);
    if (!mp) return "mountpoint " + error;
    if (!is_dir(*mp)) return "mountpoint " + *mp + " is not a directory";
    plan.mountpoint = *mp;
  }
  return std::nullopt;
}

// The tree as the agent will find it: an error when it cannot reach it; files
// it could not write even under a lease are a warning.
std::optional<std::string> check_agent_reach(const MountPlan& plan) {
  const AgentUser& agent = *plan.agent;
  if (auto why = check_agent_can_reach(plan.root, agent))
    return "--agent " + plan.cmd.agent + ": " + *why;
  // Read beneath a dead mount when restarting after a crash.
  std::string error;
  base::UniqueFd tree = plan.root_dead
                            ? fuse::open_beneath_mounts(plan.root, &error)
                            : base::UniqueFd(::open(plan.root.c_str(), O_PATH | O_CLOEXEC));
  if (tree) {
    const std::string at = "/proc/self/fd/" + std::to_string(tree.get());
    if (auto warning = entries_agent_cannot_write(at, plan.root, agent)) {
      std::fprintf(stderr, "warning: --agent %s: %s\n", plan.cmd.agent.c_str(), warning->c_str());
    }
  }
  return std::nullopt;
}

// Over the root: no process may already be inside the tree (busy_root.hpp),
// unless --allow-busy, which watches them. An error, or nullopt.
std::optional<std::string> check_busy(MountPlan& plan) {
  if (plan.mountpoint != plan.root) return std::nullopt;
  const std::string& root = plan.root;
  std::string error;
  struct stat st {};
  base::UniqueFd raw = plan.root_dead ? fuse::open_beneath_mounts(root, &error)
                                      : base::UniqueFd(::open(root.c_str(), O_PATH | O_CLOEXEC));
  if (!raw || ::fstat(raw.get(), &st) != 0) return std::nullopt;
  const auto found = find_busy_processes(root, st.st_dev, ::getpid());
  if (!found.empty() && !plan.cmd.allow_busy) {
    return root +
           " is in use by processes that would keep direct, ungated access to "
           "the tree beneath the mount: " +
           describe_busy(found) +
           ". Stop them or move them out of the tree (change directory, close the "
           "files), or pass --allow-busy, which leaves them able to write the tree "
           "without a lease";
  }
  if (!found.empty()) {
    std::fprintf(stderr,
                 "warning: --allow-busy: %s keep ungated access to the tree beneath the "
                 "mount; `leasectl status --json` lists them while they live\n",
                 describe_busy(found).c_str());
    plan.busy = BusyWatch{true, root, st.st_dev};
  }
  return std::nullopt;
}

// Serves in a child, detached; the parent prints the child's report and exits with it.
int serve_detached(const MountPlan& plan) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "error: pipe: %s\n", std::strerror(errno));
    return 1;
  }
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "error: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (pid > 0) {
    ::close(fds[1]);
    return wait_for_child(fds[0]);
  }
  ::close(fds[0]);
  ::setsid();
  Reporter report(fds[1]);
  ::_exit(serve(plan, report));
}

}  // namespace

int run_mount(const MountCommand& cmd) {
  // Logs go to stderr (the journal under systemd); stdout carries only the outcome.
  spdlog::set_default_logger(spdlog::stderr_color_mt("stderr"));
  spdlog::set_level(spdlog::level::from_str(cmd.log_level));
  auto fail = [](const std::string& msg) {
    std::fprintf(stderr, "error: %s\n", msg.c_str());
    return 1;
  };
  MountPlan plan(cmd);
  if (auto error = resolve_paths(plan)) return fail(*error);
  if (::access("/dev/fuse", R_OK | W_OK) != 0) {
    return fail(std::string("/dev/fuse is not available: ") + std::strerror(errno) +
                " (is the fuse module loaded, and is /dev/fuse passed to this container?)");
  }
  std::string error;
  if (!cmd.agent.empty()) {
    if (::geteuid() != 0) {
      return fail("--agent needs root: the daemon keeps .longrun while " + cmd.agent +
                  " owns the tree (run it with sudo, or use the system unit)");
    }
    plan.agent = resolve_agent(cmd.agent, &error);
    if (!plan.agent) return fail(error);
    // An approver may grant; the agent never may, however the approvers are named
    // (a fleet bridge's uid is one only when named here, and never the agent's).
    for (uid_t u : cmd.approver_uids) {
      if (u == plan.agent->uid) {
        return fail("--approver-uid " + std::to_string(u) + " is the agent " + plan.agent->name +
                    ": the agent must never approve its own requests");
      }
    }
    for (gid_t g : cmd.approver_gids) {
      if (std::find(plan.agent->groups.begin(), plan.agent->groups.end(), g) !=
          plan.agent->groups.end()) {
        return fail("--approver-gid " + std::to_string(g) + " is a group of the agent " +
                    plan.agent->name + ": the agent must never approve its own requests");
      }
    }
  }
  if (auto why = nested_in_a_root(plan.root)) return fail(*why);
  if (!check_existing_mount(plan.root, plan.root, &plan.root_dead, &error)) return fail(error);
  if (plan.mountpoint == plan.root) {
    plan.mountpoint_dead = plan.root_dead;
  } else if (!check_existing_mount(plan.mountpoint, plan.root, &plan.mountpoint_dead, &error)) {
    return fail(error);
  }
  if (plan.agent) {
    if (auto why = check_agent_reach(plan)) return fail(*why);
  }
  if (auto why = check_busy(plan)) return fail(*why);

  if (!cmd.foreground) return serve_detached(plan);
  Reporter report(-1);
  return serve(plan, report);
}

}  // namespace leasefs::daemon

// Item: no window on a crash or a restart. The daemon is killed with SIGKILL 50
// times while an agent (uid 65534) re-resolves the root and tries to write in a
// tight loop; each time a new daemon is started the way an operator or systemd
// would. Not one byte may land in the backing tree, and the mount comes back
// each time. The backing tree is looked at once every layer is cleared: what an
// agent wrote in a gap would still be there. (The test holds no descriptor on
// the tree meanwhile: the daemon would rightly refuse a busy root.)
#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/security/fdcrash_fixture.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

constexpr int kKills = 50;
// Rounds of the systemd path, each with the unit's whole RestartSec= (2 s) open.
constexpr int kUnitRestarts = 8;

class RestartTest : public FdcrashTest {
 protected:
  void SetUp() override {
    FdcrashTest::SetUp();
    // The agent could write the raw root if it ever reached it.
    ::chmod(root.c_str(), 0777);
  }
  // The agent: open by absolute path, and by a fresh cwd, then write; forever.
  void start_agent() {
    const std::string abs = root + "/agent-abs.txt";
    const std::string dir = root;
    ASSERT_GT(spawn_agent([abs, dir] {
                for (;;) {
                  int fd = ::open(abs.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0666);
                  if (fd >= 0) {
                    (void)!::write(fd, "x", 1);
                    ::close(fd);
                  }
                  if (::chdir(dir.c_str()) == 0) {
                    fd = ::open("agent-cwd.txt", O_WRONLY | O_CREAT | O_APPEND, 0666);
                    if (fd >= 0) {
                      (void)!::write(fd, "y", 1);
                      ::close(fd);
                    }
                    (void)!::chdir("/");
                  }
                }
              }),
              0);
  }
  bool live() { return base::leasefs_mount_at(root) && !fuse::dead_leasefs_mount(root); }
  // Mounts, kills the daemon with SIGKILL, and mounts again on top of the dead mount.
  void mount_crash_and_take_over() {
    auto r = leasefs({"mount", root, "--socket", sock});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ::kill(read_lock_pid(root + "/.longrun/lock"), SIGKILL);
    ASSERT_TRUE(wait_until([&] { return fuse::dead_leasefs_mount(root); }));
    r = leasefs({"mount", root, "--socket", sock});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  // Stops the agent, clears every layer (the dead mounts stay stacked beneath
  // the live one, failing closed, until then), and lists the bare tree.
  void expect_nothing_landed() {
    for (pid_t pid : children) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    children.clear();
    auto r = leasefs({"unmount", root});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    ASSERT_FALSE(base::leasefs_mount_at(root));
    base::UniqueFd dir(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    std::vector<std::string> now = list_dir(dir.get());
    now.erase(std::remove(now.begin(), now.end(), ".longrun"), now.end());
    EXPECT_EQ(now, std::vector<std::string>{}) << "the agent reached the backing tree";
  }
};

TEST_F(RestartTest, KillNineFiftyTimesWhileTheAgentWritesLandsNothing) {
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  start_agent();
  for (int i = 0; i < kKills; ++i) {
    const pid_t pid = read_lock_pid(root + "/.longrun/lock");
    ASSERT_GT(pid, 0) << "round " << i;
    ::kill(pid, SIGKILL);
    ASSERT_TRUE(wait_until([&] { return fuse::dead_leasefs_mount(root); })) << "round " << i;
    r = leasefs({"mount", root, "--socket", sock});
    ASSERT_EQ(r.exit_code, 0) << "round " << i << ": " << r.output;
    ASSERT_TRUE(live()) << "round " << i;
    EXPECT_NE(read_lock_pid(root + "/.longrun/lock"), pid);
  }
  expect_nothing_landed();
}

// A daemon that took over reaches the tree through a private clone of the
// parent's mount; paths, and so path-narrowed grants, still come out right.
TEST_F(RestartTest, PathNarrowedGrantHoldsAfterATakeover) {
  for (const char* d : {"/a", "/b"}) {
    ::mkdir((root + d).c_str(), 0777);
    ::chmod((root + d).c_str(), 0777);  // past the umask: only the gate may refuse
  }
  ASSERT_NO_FATAL_FAILURE(mount_crash_and_take_over());
  {
    ControlClient c(sock);
    ASSERT_TRUE(c.call("start", {{"description", "takeover"}}).value("ok", false));
    auto g = c.call("grant", {{"reason", "a only"}, {"paths", {"a/*"}}});
    ASSERT_TRUE(g.value("ok", false)) << g.dump();
  }
  RunOptions as_agent;
  as_agent.uid = kAgentUid;
  auto w = run_sh("echo in > " + root + "/a/x", as_agent);
  EXPECT_EQ(w.exit_code, 0) << w.output;
  w = run_sh("echo out > " + root + "/b/y", as_agent);
  EXPECT_NE(w.exit_code, 0) << w.output;
  auto r = leasefs({"unmount", root});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(root + "/a/x");
  std::string content;
  in >> content;
  EXPECT_EQ(content, "in");
  EXPECT_NE(::access((root + "/b/y").c_str(), F_OK), 0);
}

// A daemon that took over tells the kernel what it changes underneath as the
// first one did: after a fallocate by the agent, the setgid bit it dropped is
// gone from the mode `stat -c %a` reads (a statx for the mode alone, answered
// from the kernel's cache unless the daemon invalidates it).
TEST_F(RestartTest, PrivilegeBitsDroppedAfterATakeoverAreSeenThroughTheMount) {
  auto r = run_sh("head -c 65536 /dev/zero > " + root + "/f && chmod 2767 " + root + "/f");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NO_FATAL_FAILURE(mount_crash_and_take_over());
  {
    ControlClient c(sock);
    ASSERT_TRUE(c.call("start", {{"description", "takeover"}}).value("ok", false));
    auto g = c.call("grant", {{"reason", "everything"}});
    ASSERT_TRUE(g.value("ok", false)) << g.dump();
  }
  RunOptions as_agent;
  as_agent.uid = kAgentUid;
  auto mode = run_sh("stat -c %a " + root + "/f && fallocate -z -o 0 -l 4096 " + root +
                         "/f && stat -c %a " + root + "/f",
                     as_agent);
  EXPECT_EQ(mode.output, "2767\n767\n");
}

// A root that is itself a mount (a volume) cannot be reached beneath a dead
// leasefs mount: the takeover says so and the dead mount stays, failing closed.
TEST_F(RestartTest, RootThatIsAMountStaysClosedWithAClearError) {
  ASSERT_EQ(run_argv({"mount", "-t", "tmpfs", "-o", "mode=0777", "leasefs-test", root}).exit_code,
            0);
  other_mounts.push_back(root);
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ::kill(read_lock_pid(root + "/.longrun/lock"), SIGKILL);
  ASSERT_TRUE(wait_until([&] { return fuse::dead_leasefs_mount(root); }));
  r = leasefs({"mount", root, "--socket", sock});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("is the root of a tmpfs mount"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("leasefs unmount"), std::string::npos) << r.output;
  EXPECT_TRUE(fuse::dead_leasefs_mount(root));
  r = leasefs({"unmount", "--force", root});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// `leasefs unmount` on a dead mount (what ExecStop= runs after a crash) keeps it,
// and the tree closed; only --force removes it.
TEST_F(RestartTest, UnmountKeepsADeadMountUnlessForced) {
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ::kill(read_lock_pid(root + "/.longrun/lock"), SIGKILL);
  ASSERT_TRUE(wait_until([&] { return fuse::dead_leasefs_mount(root); }));
  r = leasefs({"unmount", root});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the tree stays closed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("leasefs unmount --force"), std::string::npos) << r.output;
  EXPECT_TRUE(fuse::dead_leasefs_mount(root));
  RunOptions as_agent;
  as_agent.uid = kAgentUid;
  EXPECT_NE(run_sh("echo x > " + root + "/after-stop", as_agent).exit_code, 0);
  r = leasefs({"unmount", "--force", root});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(base::leasefs_mount_at(root));
  EXPECT_NE(::access((root + "/after-stop").c_str(), F_OK), 0);
}

// The systemd unit's own commands, read from the unit file: after the main
// process dies, ExecStop= (systemd runs it after a crash too), ExecStopPost=,
// then RestartSec= of nothing, then ExecStartPre=, then ExecStart= again.
std::vector<std::vector<std::string>> unit_commands(const std::string& key, const std::string& root,
                                                    const std::string& socket) {
  std::ifstream in(std::string(LEASEFS_SOURCE_DIR) + "/systemd/leasefs@.service");
  std::vector<std::vector<std::string>> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + "=", 0) != 0) continue;
    std::string cmd = line.substr(key.size() + 1);
    if (!cmd.empty() && cmd[0] == '-') cmd.erase(0, 1);  // failure ignored
    std::istringstream words(cmd);
    std::vector<std::string> argv;
    for (std::string w; words >> w;) {
      if (w == "/usr/local/bin/leasefs") w = kLeasefs;
      if (w == "%f") w = root;
      if (w == "/run/leasefs/%i.sock") w = socket;
      if (w == "$LEASEFS_OPTIONS") continue;  // unset: expands to no word
      argv.push_back(w);
    }
    out.push_back(argv);
  }
  return out;
}

// RestartSec=, in milliseconds (systemd's default, 100 ms, when unset).
int restart_ms() {
  std::ifstream in(std::string(LEASEFS_SOURCE_DIR) + "/systemd/leasefs@.service");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("RestartSec=", 0) != 0) continue;
    const std::string v = line.substr(11);
    const double n = std::stod(v);
    if (v.find("ms") != std::string::npos) return static_cast<int>(n);
    if (v.find("min") != std::string::npos) return static_cast<int>(n * 60000);
    return static_cast<int>(n * 1000);
  }
  return 100;
}

TEST_F(RestartTest, SystemdRestartPathLandsNothing) {
  const auto start = unit_commands("ExecStart", root, sock);
  ASSERT_EQ(start.size(), 1u);
  const auto stop = unit_commands("ExecStop", root, sock);
  const auto stop_post = unit_commands("ExecStopPost", root, sock);
  const auto start_pre = unit_commands("ExecStartPre", root, sock);
  auto exec_start = [&] {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int null =
          ::open(getenv("FDCRASH_DAEMON_LOG") ? getenv("FDCRASH_DAEMON_LOG") : "/dev/null",
                 O_RDWR | O_CREAT | O_APPEND, 0644);
      ::dup2(null, 1);
      ::dup2(null, 2);
      std::vector<char*> argv;
      for (const std::string& a : start[0]) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    remember(pid);
    return pid;
  };
  pid_t pid = exec_start();
  ASSERT_TRUE(wait_until([&] { return live(); }));
  start_agent();
  for (int i = 0; i < kUnitRestarts; ++i) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    for (const auto& argv : stop) run_argv(argv);
    for (const auto& argv : stop_post) run_argv(argv);
    // The window systemd leaves open: the agent keeps re-entering the root.
    std::this_thread::sleep_for(std::chrono::milliseconds(restart_ms()));
    for (const auto& argv : start_pre) run_argv(argv);
    pid = exec_start();
    ASSERT_TRUE(wait_until([&] { return live(); })) << "round " << i;
  }
  expect_nothing_landed();
}

}  // namespace
}  // namespace leasefs::test

// Item: a busy root is not mounted over silently. Processes of uid 65534 that
// sit in the tree (cwd), hold a file of it open, or map one, would keep the raw
// tree beneath the mount; `leasefs mount` names them and refuses, and with
// --allow-busy `status` lists them while they live.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>

#include "tests/security/fdcrash_fixture.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

class BusyRootTest : public FdcrashTest {
 protected:
  // Starts one agent per way of reaching the tree; returns once each is in place.
  void start_busy_agents() {
    std::ofstream(root + "/held.txt") << "held";
    std::ofstream(root + "/mapped.bin") << std::string(4096, 'm');
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const std::string dir = root, held = root + "/held.txt", mapped = root + "/mapped.bin";
    const int w = ready[1];
    cwd_pid = spawn_agent([dir, w] {
      if (::chdir(dir.c_str()) != 0) ::_exit(1);
      (void)!::write(w, "c", 1);
      for (;;) ::pause();
    });
    fd_pid = spawn_agent([held, w] {
      if (::chdir("/") != 0 || ::open(held.c_str(), O_RDONLY) < 0) ::_exit(1);
      (void)!::write(w, "f", 1);
      for (;;) ::pause();
    });
    map_pid = spawn_agent([mapped, w] {
      const int fd = ::open(mapped.c_str(), O_RDONLY);
      if (::chdir("/") != 0 || fd < 0) ::_exit(1);
      if (::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) ::_exit(1);
      ::close(fd);
      (void)!::write(w, "m", 1);
      for (;;) ::pause();
    });
    ::close(ready[1]);
    char buf[3];
    size_t got = 0;
    while (got < 3) {
      const ssize_t n = ::read(ready[0], buf + got, 3 - got);
      ASSERT_GT(n, 0) << "an agent did not get into place";
      got += static_cast<size_t>(n);
    }
    ::close(ready[0]);
  }
  pid_t cwd_pid = 0, fd_pid = 0, map_pid = 0;
};

TEST_F(BusyRootTest, MountOverABusyRootIsRefusedNamingTheProcesses) {
  start_busy_agents();
  auto r = leasefs({"mount", root, "--socket", sock});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_FALSE(base::leasefs_mount_at(root));
  EXPECT_NE(r.output.find(std::to_string(cwd_pid) + " ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(": cwd)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(std::to_string(fd_pid) + " ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(": fd "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(std::to_string(map_pid) + " ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(": mapping ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--allow-busy"), std::string::npos) << r.output;
}

TEST_F(BusyRootTest, AllowBusyMountsAndStatusWarnsWhileTheyLive) {
  start_busy_agents();
  auto r = leasefs({"mount", root, "--socket", sock, "--allow-busy"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: --allow-busy"), std::string::npos) << r.output;
  auto status = [&] {
    ControlClient c(sock);
    return c.call("status");
  };
  auto s = status();
  ASSERT_TRUE(s.value("ok", false)) << s.dump();
  const auto& busy = s["result"]["file_plane"]["busy_processes"];
  std::vector<pid_t> pids;
  for (const auto& p : busy) pids.push_back(p["pid"].get<pid_t>());
  std::sort(pids.begin(), pids.end());
  std::vector<pid_t> want = {cwd_pid, fd_pid, map_pid};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(pids, want) << s.dump();
  EXPECT_TRUE(s["result"]["file_plane"].contains("warning")) << s.dump();

  for (pid_t pid : children) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  children.clear();
  s = status();
  EXPECT_TRUE(s["result"]["file_plane"]["busy_processes"].empty()) << s.dump();
  EXPECT_FALSE(s["result"]["file_plane"].contains("warning")) << s.dump();
}

TEST_F(BusyRootTest, ProcessesInsideTheMountAreNotBusy) {
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const pid_t pid = read_lock_pid(root + "/.longrun/lock");
  // An agent that entered after the mount sits in the mount, not the tree.
  const std::string dir = root;
  spawn_agent([dir] {
    if (::chdir(dir.c_str()) != 0) ::_exit(1);
    for (;;) ::pause();
  });
  ::kill(pid, SIGKILL);
  ASSERT_TRUE(wait_until([&] { return fuse::dead_leasefs_mount(root); }));
  r = leasefs({"mount", root, "--socket", sock});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace leasefs::test

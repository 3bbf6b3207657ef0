// Attack class: a gate that will not go down cleanly. The agent makes the daemon
// busy in every way it can (refused writes, a half-sent request, watch streams,
// files held open through the mount, a process waiting in flock() for a lock
// another holds), then the daemon is told to stop. It must be gone within 5
// seconds for SIGTERM, SIGINT and SIGHUP alike, leave no frozen mount behind (the
// root answers, at once, without the daemon), and the state on disk must still
// load: a mount of the same root right after it is served, never refused as
// "already served".
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

class ControlSignals : public ::testing::TestWithParam<int> {};

TEST_P(ControlSignals, StopsWithinFiveSecondsWhateverTheAgentHolds) {
  const int sig = GetParam();
  ControlDaemon d;
  {
    std::ofstream(d.root() + "/locked") << "x\n";
    ASSERT_EQ(::chmod((d.root() + "/locked").c_str(), 0644), 0);
  }
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  {
    ControlClient root(d.socket());
    ASSERT_TRUE(root.call("start", {{"description", "signals"}}).value("ok", false));
  }
  RunOptions as_agent;
  as_agent.cwd = d.root();
  as_agent.uid = kAgentUid;
  as_agent.timeout_s = 10;
  // Refused writes, through the mount.
  for (int i = 0; i < 20; ++i) {
    EXPECT_NE(run_sh("echo x > refused" + std::to_string(i) + ".txt", as_agent).exit_code, 0);
  }
  // A file held open through the mount, a half-sent request and two watchers,
  // all by the agent, all still there when the signal comes.
  pid_t holder = spawn_agent([&] {
    int fd = ::open((d.root() + "/.longrun/status.md").c_str(), O_RDONLY);
    ControlClient w1(d.socket());
    ControlClient w2(d.socket());
    w1.call("watch");
    w2.call("watch");
    ControlClient unread(d.socket());
    unread.send_line(R"({"id":2,"cmd":"status"})");  // answered, never read
    int half = connect_unix(d.socket());
    std::string partial = R"({"id":3,"cmd":"request","args":{"reason":"never ends)";
    ::send(half, partial.data(), partial.size(), MSG_NOSIGNAL);
    ::pause();
    return fd < 0 ? 1 : 0;
  });
  // And refusals still coming when the signal lands.
  pid_t refuser = spawn_agent([&] {
    for (int i = 0;; ++i) {
      // Into the tree and into .longrun, which no lease opens.
      std::string name = (i % 2 ? "/flood" : "/.longrun/evil") + std::to_string(i % 50);
      int fd = ::open((d.root() + name).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd >= 0) return 1;
    }
  });
  // A lock held through the mount, and a second process waiting for it in
  // flock(), which the daemon serves by waiting in flock() underneath.
  int held[2];
  ASSERT_EQ(::pipe(held), 0);
  const std::string locked = d.root() + "/locked";
  pid_t locker = spawn_agent([&] {
    int fd = ::open(locked.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) return 1;
    (void)!::write(held[1], "1", 1);
    ::pause();
    return 0;
  });
  char one = 0;
  ASSERT_EQ(::read(held[0], &one, 1), 1) << "the lock was not taken through the mount";
  ::close(held[0]);
  ::close(held[1]);
  pid_t waiter = spawn_agent([&] {
    int fd = ::open(locked.c_str(), O_RDONLY | O_CLOEXEC);
    return fd >= 0 && ::flock(fd, LOCK_EX) == 0 ? 0 : 1;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  const pid_t daemon = d.pid();
  ASSERT_GT(daemon, 0);
  EXPECT_TRUE(d.stop_with(sig, 5'000)) << "the daemon did not stop within 5 s of signal " << sig;

  // No frozen mount: the root answers without the daemon (a frozen FUSE mount
  // would hang this until the timeout).
  RunOptions quick;
  quick.timeout_s = 5;
  RunResult ls = run_sh("ls -a " + d.root(), quick);
  EXPECT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_FALSE(d.mounted());

  // The state is consistent: a new daemon takes the root right away, while the
  // agent's processes are still there, and serves the task.
  auto again = d.mount();
  kill_child(holder);
  kill_child(refuser);
  kill_child(locker);
  kill_child(waiter);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  ControlClient root(d.socket());
  json status = root.call("status");
  ASSERT_TRUE(status.value("ok", false)) << status.dump();
  EXPECT_EQ(status["result"]["task"].value("status", ""), "in_progress") << status.dump();
}

std::string signal_name(const ::testing::TestParamInfo<int>& info) {
  return info.param == SIGTERM ? "SIGTERM" : info.param == SIGINT ? "SIGINT" : "SIGHUP";
}

INSTANTIATE_TEST_SUITE_P(EachStopSignal, ControlSignals, ::testing::Values(SIGTERM, SIGINT, SIGHUP),
                         signal_name);

}  // namespace
}  // namespace leasefs::test

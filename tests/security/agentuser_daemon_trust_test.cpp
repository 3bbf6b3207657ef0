// Attack: the agent puts a daemon of its own where leasectl looks for the real one,
// so that the host's `leasectl turn` advances nothing, or an approver reads and
// answers what the agent chose. leasectl must refuse a discovered daemon that is
// not the one serving the tree (issue 9, item 7).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/support/agentuser_daemons.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

constexpr uid_t kAgent = 65534;
constexpr gid_t kAgentGid = 65534;

// A socket in a directory the agent may write: the agent replaces it with its own.
TEST_F(AgentUserTest, SocketReplacedByTheAgentIsRefused) {
  const std::string root = base + "/root", mnt = base + "/mnt", agent_dir = base + "/agent";
  for (const auto& d : {root, mnt, agent_dir}) ::mkdir(d.c_str(), 0755);
  ASSERT_EQ(::chown(agent_dir.c_str(), kAgent, kAgentGid), 0);
  const std::string sock = agent_dir + "/ctl.sock";
  auto r = leasefs({"mount", root, mnt, "--socket", sock}, mnt, root);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // The agent's impostor answers every request with success.
  std::ofstream(base + "/fake.py") << R"(import json, os, socket, sys
path, ready = sys.argv[1], sys.argv[2]
os.unlink(path)
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(8)
open(ready, "w").write("ready")
while True:
    c, _ = s.accept()
    f = c.makefile("rwb")
    for line in f:
        req = json.loads(line)
        f.write((json.dumps({"id": req.get("id"), "ok": True,
                 "result": {"turn": 99, "revoked": 0, "access_mode": "read_only"}}) + "\n").encode())
        f.flush()
    c.close()
)";
  RunResult fake = as_user(kAgent, kAgentGid,
                           "python3 " + q(base + "/fake.py") + " " + q(sock) + " " +
                               q(agent_dir + "/ready") + " >/dev/null 2>&1 & echo $!",
                           base);
  ASSERT_EQ(fake.exit_code, 0) << fake.output;
  pids.push_back(static_cast<pid_t>(std::stoi(fake.output)));
  ASSERT_TRUE(wait_for_file(agent_dir + "/ready"));

  // The person (root) in the tree asks for the turn, as a host hook would.
  RunOptions in_mnt;
  in_mnt.cwd = mnt;
  RunResult turn = run_argv({LEASECTL_PATH, "turn"}, in_mnt);
  EXPECT_EQ(turn.exit_code, 3) << turn.output;
  EXPECT_EQ(turn.output.find("turn 99"), std::string::npos) << turn.output;
  EXPECT_NE(turn.output.find("held by uid 65534"), std::string::npos) << turn.output;

  // Named explicitly, the same socket is the caller's choice (and answers).
  RunResult named = run_argv({LEASECTL_PATH, "--socket", sock, "turn"}, in_mnt);
  EXPECT_EQ(named.exit_code, 0) << named.output;
}

// A mount of the agent's own that calls itself leasefs, stacked inside the real one
// over a directory the agent owns, whose .longrun/socket leads to the agent's
// impostor: the host's turn hook would advance nothing while the real lease stays.
TEST_F(AgentUserTest, StackedMountMadeByTheAgentIsRefused) {
  const std::string root = base + "/root", mnt = base + "/mnt", agent_dir = base + "/agent";
  for (const auto& d : {root, mnt, agent_dir, root + "/sub"}) ::mkdir(d.c_str(), 0755);
  ASSERT_EQ(::chown(agent_dir.c_str(), kAgent, kAgentGid), 0);
  ASSERT_EQ(::chown((root + "/sub").c_str(), kAgent, kAgentGid), 0);
  const std::string sock = base + "/ctl.sock";
  auto r = leasefs({"mount", root, mnt, "--socket", sock}, mnt, root);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  {
    ControlClient c(sock);
    ASSERT_TRUE(c.call("start", {{"description", "stacked mount"}}).value("ok", false));
    ASSERT_TRUE(c.call("grant", {{"reason", "edit sub"}}).value("ok", false));
  }

  // The agent's tree for its mount: a .longrun/socket naming its own listener.
  const std::string fake_tree = agent_dir + "/tree", fake_sock = agent_dir + "/fake.sock";
  RunResult prep =
      as_user(kAgent, kAgentGid,
              "mkdir -p " + q(fake_tree + "/.longrun") + " && echo " + q(fake_sock) + " > " +
                  q(fake_tree + "/.longrun/socket") +
                  " && python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX);"
                  " s.bind(sys.argv[1]); s.listen(8); open(sys.argv[2],\"w\");"
                  " import time; [s.accept()[0].sendall(b\"{\\\"id\\\":1,\\\"ok\\\":"
                  "true,\\\"result\\\":{\\\"turn\\\":99,\\\"revoked\\\":0}}\\n\")"
                  " for _ in iter(int, 1)]' " +
                  q(fake_sock) + " " + q(agent_dir + "/ready") + " >/dev/null 2>&1 & echo $!",
              base);
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  pids.push_back(static_cast<pid_t>(std::stoi(prep.output)));
  ASSERT_TRUE(wait_for_file(agent_dir + "/ready"));

  const std::string sub = mnt + "/sub";
  mounts.push_back(sub);
  RunResult stacked = run_sh(q(FAKE_MOUNT_BIN) + " 65534 " + q(fake_tree) + " " + q(sub) + " > " +
                             q(agent_dir + "/mount.out") + " 2>&1 & echo $!");
  ASSERT_EQ(stacked.exit_code, 0) << stacked.output;
  pids.push_back(static_cast<pid_t>(std::stoi(stacked.output)));
  for (int i = 0; i < 500 && read_text(agent_dir + "/mount.out").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(read_text(agent_dir + "/mount.out"), "ready\n");

  // The agent runs leasectl inside its stacked mount: its impostor is not asked;
  // the real daemon is found, whose socket is not the agent's to use.
  // (cd in the script: the test runner changes directory before it drops root, and
  // a FUSE mount without allow_other lets in only its owner.)
  RunResult turn =
      as_user(kAgent, kAgentGid, "cd " + q(sub) + " && " + q(LEASECTL_PATH) + " turn", base);
  EXPECT_EQ(turn.exit_code, 3) << turn.output;
  EXPECT_EQ(turn.output.find("turn 99"), std::string::npos) << turn.output;
  EXPECT_EQ(turn.output.find(fake_sock), std::string::npos) << turn.output;
  EXPECT_NE(turn.output.find(sock), std::string::npos) << turn.output;

  // The person's turn hook for a session in that directory (which root cannot even
  // enter) reaches the real daemon and ends the lease.
  const std::string input = nlohmann::json{{"cwd", sub}}.dump();
  RunResult hook =
      run_sh("echo " + q(input) + " | env -u LEASEFS_SOCKET " + q(LEASECTL_PATH) + " --hook turn");
  EXPECT_EQ(hook.exit_code, 0) << hook.output;
  ControlClient c(sock);
  auto status = c.call("status");
  EXPECT_EQ(status["result"]["turn"], 1) << status.dump();
  EXPECT_EQ(status["result"]["access_mode"], "read_only") << status.dump();
}

// The control: the real daemon, mounted by root, is found and trusted.
TEST_F(AgentUserTest, DaemonMountedByRootIsTrusted) {
  const std::string root = base + "/root", mnt = base + "/mnt";
  for (const auto& d : {root, mnt}) ::mkdir(d.c_str(), 0755);
  auto r = leasefs({"mount", root, mnt, "--socket", base + "/ctl.sock"}, mnt, root);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  RunOptions in_mnt;
  in_mnt.cwd = mnt;
  RunResult status = run_argv({LEASECTL_PATH, "status"}, in_mnt);
  EXPECT_EQ(status.exit_code, 0) << status.output;
}

// The registry of daemons is written under a lock (protocol/daemon_registry.cpp).
// The agent takes every lock it can reach there and holds it: the lock file is
// not among them, and a daemon still registers, stops and is found.
TEST_F(AgentUserTest, TheAgentCannotHoldTheRegistryLockToStallADaemon) {
  const std::string agent_dir = base + "/agent";
  ::mkdir(agent_dir.c_str(), 0755);
  ASSERT_EQ(::chown(agent_dir.c_str(), kAgent, kAgentGid), 0);
  auto mount_one = [&](const std::string& name) {
    const std::string root = base + "/" + name, mnt = base + "/" + name + "-mnt";
    for (const auto& d : {root, mnt}) ::mkdir(d.c_str(), 0755);
    auto r = leasefs({"mount", root, mnt, "--socket", base + "/" + name + ".sock"}, mnt, root);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return mnt;
  };
  mount_one("first");  // the registry and its lock exist from here on
  const std::string registry = "/run/leasefs/daemons";

  RunResult lock_file = as_user(kAgent, kAgentGid, "flock -x -n " + registry + "/.lock true", base);
  EXPECT_NE(lock_file.exit_code, 0) << lock_file.output;
  EXPECT_NE(lock_file.output.find("Permission denied"), std::string::npos) << lock_file.output;

  // The directory itself it may open, so it holds that.
  RunResult held = as_user(kAgent, kAgentGid,
                           "flock -x -o " + registry + " sh -c " +
                               q("echo > " + q(agent_dir + "/ready") + "; sleep 90") +
                               " >/dev/null 2>&1 & echo $!",
                           base);
  ASSERT_EQ(held.exit_code, 0) << held.output;
  pids.push_back(static_cast<pid_t>(std::stoi(held.output)));
  ASSERT_TRUE(wait_for_file(agent_dir + "/ready"));

  const std::string mnt = mount_one("second");
  RunOptions in_mnt;
  in_mnt.cwd = mnt;
  RunResult turn = run_argv({LEASECTL_PATH, "turn"}, in_mnt);
  EXPECT_EQ(turn.exit_code, 0) << turn.output;
  RunResult down = run_argv({LEASEFS_BIN, "unmount", mnt});
  EXPECT_EQ(down.exit_code, 0) << down.output;
}

}  // namespace
}  // namespace leasefs::test

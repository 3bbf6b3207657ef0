// Attack: the agent owns the tree, so on a stock Debian host (/dev/fuse 0666,
// fusermount3 setuid) it can stack a FUSE mount of its own over the project root.
// The host's turn hook, run from the project root, then met the agent's mount
// instead of the daemon, and the lease outlived the turn (issue 27, point 3).
// leasectl must find the real daemon without reading the tree, and the daemon must
// end every lease while a mount no approver made covers its tree.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "protocol/socket_path.hpp"
#include "tests/support/agentuser_daemons.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using json = nlohmann::json;

class ForeignMountTest : public AgentUserTest {
 protected:
  void SetUp() override {
    AgentUserTest::SetUp();
    // As Debian ships it, for this test only.
    struct stat st {};
    ASSERT_EQ(::stat("/dev/fuse", &st), 0);
    fuse_mode = st.st_mode & 07777;
    ASSERT_EQ(::chmod("/dev/fuse", 0666), 0);
  }
  void TearDown() override {
    if (agent_ctl.size() > 0) std::ofstream(agent_ctl + "/cmd" + std::to_string(cmds)) << "quit";
    AgentUserTest::TearDown();
    ::chmod("/dev/fuse", fuse_mode);
  }

  // `leasefs mount ROOT --agent USER` over a tree USER owns, with a task and a grant.
  void mount_for_agent() {
    std::tie(uid, gid) = add_user("lfsagent");
    ASSERT_FALSE(users.empty());
    root = base + "/root";
    ::mkdir(root.c_str(), 0755);
    ::mkdir((root + "/src").c_str(), 0755);
    std::ofstream(root + "/src/a.txt") << "timeout = 10\n";
    ASSERT_EQ(run_argv({"chown", "-R", users.back() + ":", root}).exit_code, 0);
    RunResult r = leasefs({"mount", root, "--agent", users.back()}, root, root);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    sock = protocol::default_socket_path(root);
    ControlClient c(sock);
    ASSERT_TRUE(c.call("start", {{"description", "foreign mount"}}).value("ok", false));
    ASSERT_TRUE(c.call("grant", {{"reason", "edit src"}}).value("ok", false));

    // The agent's own directory, outside the tree: its mount's backing and the
    // mailbox of its writer.
    agent_dir = base + "/agent";
    agent_ctl = agent_dir + "/ctl";
    ::mkdir(agent_dir.c_str(), 0755);
    ::mkdir(agent_ctl.c_str(), 0755);
    ::mkdir((agent_dir + "/tree").c_str(), 0755);
    std::ofstream(agent_dir + "/tree/README") << "nothing to see here\n";
    ASSERT_EQ(run_argv({"chown", "-R", users.back() + ":", agent_dir}).exit_code, 0);
  }

  // An agent process that entered the tree before the agent's mount went over it:
  // it writes the names it is sent, relative to the root, and answers what happened.
  void start_agent_writer() {
    std::ofstream(agent_dir + "/writer.py") << R"(import os, sys, time
os.chdir(sys.argv[1])
ctl = sys.argv[2]
open(ctl + "/ready", "w").close()
n = 0
while True:
    cmd = "%s/cmd%d" % (ctl, n)
    while not os.path.exists(cmd):
        time.sleep(0.01)
    time.sleep(0.01)
    name = open(cmd).read().strip()
    if name == "quit":
        break
    try:
        with open(name, "w") as f:
            f.write("written by the agent\n")
        res = "ok"
    except OSError as e:
        res = e.strerror
    with open("%s/res%d.tmp" % (ctl, n), "w") as f:
        f.write(res)
    os.rename("%s/res%d.tmp" % (ctl, n), "%s/res%d" % (ctl, n))
    n += 1
)";
    RunResult w = as_user(uid, gid,
                          "python3 " + q(agent_dir + "/writer.py") + " " + q(root) + " " +
                              q(agent_ctl) + " >/dev/null 2>&1 & echo $!",
                          base);
    ASSERT_EQ(w.exit_code, 0) << w.output;
    pids.push_back(static_cast<pid_t>(std::stoi(w.output)));
    ASSERT_TRUE(wait_for_file(agent_ctl + "/ready"));
  }

  // What the agent's writer answered for a write of `rel` (relative to the root).
  std::string agent_write(const std::string& rel) {
    const std::string n = std::to_string(cmds++);
    std::ofstream(agent_ctl + "/cmd" + n) << rel;
    if (!wait_for_file(agent_ctl + "/res" + n)) return "no answer";
    return read_text(agent_ctl + "/res" + n);
  }

  // The agent stacks a FUSE mount of its own over the project root, through
  // fusermount3, as any user may where /dev/fuse is 0666.
  void stack_agent_mount() {
    mounts.push_back(root);  // on top of the daemon's: detached first
    const std::string out = agent_dir + "/mount.out";
    RunResult m =
        as_user(uid, gid,
                q(FAKE_MOUNT_BIN) + " " + std::to_string(uid) + " " + q(agent_dir + "/tree") + " " +
                    q(root) + " > " + q(out) + " 2>&1 & echo $!",
                base);
    ASSERT_EQ(m.exit_code, 0) << m.output;
    pids.push_back(static_cast<pid_t>(std::stoi(m.output)));
    for (int i = 0; i < 500 && read_text(out).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(read_text(out), "ready\n");
    // The project root now shows the agent's tree, to the agent.
    RunResult ls = as_user(uid, gid, "ls " + q(root), base);
    ASSERT_NE(ls.output.find("README"), std::string::npos) << ls.output;
  }

  void unstack_agent_mount() {
    RunResult u = as_user(uid, gid, "fusermount3 -u " + q(root), base);
    ASSERT_EQ(u.exit_code, 0) << u.output;
  }

  // Status, polled (bounded) until `done` holds for it or ten seconds passed.
  json status_when(const std::function<bool(const json&)>& done) {
    ControlClient c(sock);
    json s;
    for (int i = 0; i < 500; ++i) {
      s = c.call("status")["result"];
      if (done(s)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return s;
  }
  static bool has_foreign_mounts(const json& s) {
    return s.contains("foreign_mounts") && !s["foreign_mounts"].empty();
  }

  mode_t fuse_mode = 0600;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string root, sock, agent_dir, agent_ctl;
  int cmds = 0;
};

// The host's prompt hook, as `leasectl hooks claude-code` prints it, run as the
// agent's host runs it: as the agent's uid, from the project root, which now shows
// the agent's mount. It must reach the real daemon, and the new turn must end the
// lease of the agent's processes that are still inside the real tree.
TEST_F(ForeignMountTest, TurnHookInTheRootReachesTheRealDaemonThroughTheAgentsMount) {
  mount_for_agent();
  start_agent_writer();
  ASSERT_EQ(agent_write("src/a.txt"), "ok");  // the lease holds
  const int64_t turn_before = ControlClient(sock).call("status")["result"]["turn"].get<int64_t>();

  stack_agent_mount();

  RunResult hooks = run_argv({LEASECTL_PATH, "hooks", "claude-code"});
  ASSERT_EQ(hooks.exit_code, 0) << hooks.output;
  const std::string prompt_hook =
      json::parse(hooks.output)["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"];
  const std::string input = json{{"hook_event_name", "UserPromptSubmit"}, {"cwd", root}}.dump();
  std::ofstream(base + "/hook.json") << input;
  RunResult hook = as_user(uid, gid,
                           "cd " + q(root) + " && env -u LEASEFS_SOCKET sh -c " + q(prompt_hook) +
                               " < " + q(base + "/hook.json"),
                           base);
  EXPECT_EQ(hook.exit_code, 0) << hook.output;

  json s = ControlClient(sock).call("status")["result"];
  EXPECT_EQ(s["turn"].get<int64_t>(), turn_before + 1) << s.dump();
  EXPECT_EQ(s["access_mode"], "read_only") << s.dump();
  EXPECT_EQ(agent_write("src/a.txt"), "Permission denied");
  EXPECT_EQ(agent_write("src/new.txt"), "Permission denied");

  // The person's Stop hook, as root, from wherever the host runs it: the session's
  // directory is the root, which root cannot even enter through the agent's mount.
  const std::string stop_hook =
      json::parse(hooks.output)["hooks"]["Stop"][0]["hooks"][0]["command"];
  std::ofstream(base + "/stop.json") << json{{"hook_event_name", "Stop"}, {"cwd", root}}.dump();
  RunOptions in_base;
  in_base.cwd = base;
  RunResult stop = run_sh(
      "env -u LEASEFS_SOCKET sh -c " + q(stop_hook) + " < " + q(base + "/stop.json"), in_base);
  EXPECT_EQ(stop.exit_code, 0) << stop.output;
}

// Without any turn: the mount alone ends every grant at once, new grants are
// refused while it stays, and the approver reads it in status, watch and the audit.
TEST_F(ForeignMountTest, ForeignMountRevokesEveryGrantAndRefusesNewOnesUntilItIsGone) {
  mount_for_agent();
  start_agent_writer();
  ASSERT_EQ(agent_write("src/a.txt"), "ok");
  ControlClient watcher(sock);
  ASSERT_TRUE(watcher.call("watch").value("ok", false));

  stack_agent_mount();

  json s = status_when(has_foreign_mounts);
  ASSERT_TRUE(has_foreign_mounts(s)) << s.dump();
  EXPECT_EQ(s["access_mode"], "read_only") << s.dump();
  EXPECT_EQ(s["foreign_mounts"][0]["mount_point"], root) << s.dump();
  EXPECT_EQ(s["foreign_mounts"][0]["uid"], uid) << s.dump();
  EXPECT_EQ(agent_write("src/a.txt"), "Permission denied");

  ControlClient person(sock);
  json refused = person.call("grant", {{"reason", "while the agent's mount is there"}});
  EXPECT_FALSE(refused.value("ok", true)) << refused.dump();
  EXPECT_EQ(refused["error"]["code"], "foreign_mount") << refused.dump();
  RunResult human = run_argv({LEASECTL_PATH, "--socket", sock, "status"});
  EXPECT_EQ(human.exit_code, 0) << human.output;
  EXPECT_NE(human.output.find("foreign mount"), std::string::npos) << human.output;
  EXPECT_NE(human.output.find(root), std::string::npos) << human.output;

  json event = json::object();
  for (int i = 0; i < 50 && event.value("type", "") != "foreign_mount"; ++i) {
    event = json::parse(watcher.read_line(10000));
  }
  EXPECT_EQ(event.value("type", ""), "foreign_mount") << event.dump();
  EXPECT_EQ(event.value("state", ""), "appeared") << event.dump();
  EXPECT_EQ(event.value("revoked", 0), 1) << event.dump();
  EXPECT_EQ(event.value("mount_point", ""), root) << event.dump();

  unstack_agent_mount();
  s = status_when([](const json& st) { return !has_foreign_mounts(st); });
  EXPECT_FALSE(has_foreign_mounts(s)) << s.dump();
  json granted = person.call("grant", {{"reason", "the agent's mount is gone"}});
  EXPECT_TRUE(granted.value("ok", false)) << granted.dump();
  EXPECT_EQ(agent_write("src/a.txt"), "ok");

  // The audit has both ends, in order (it is appended in batches: read until both are in).
  std::vector<std::string> states;
  for (int i = 0; i < 500 && states.size() < 2; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    states.clear();
    std::ifstream audit(root + "/.longrun/audit.jsonl");
    for (std::string line; std::getline(audit, line);) {
      json rec = json::parse(line, nullptr, false);
      if (rec.is_discarded() || !rec.contains("event")) continue;
      if (rec["event"].value("type", "") == "foreign_mount") {
        states.push_back(rec["event"].value("state", ""));
      }
    }
  }
  EXPECT_EQ(states, (std::vector<std::string>{"appeared", "gone"}));
}

}  // namespace
}  // namespace leasefs::test

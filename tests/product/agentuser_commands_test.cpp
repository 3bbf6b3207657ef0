// Commands do what they say, and only that: --help and --version change nothing;
// one version everywhere; a turn that never was is an error; durations are written
// and shown with units; --foreground logs go to stderr; watch says the daemon left.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/agentuser_daemons.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using json = nlohmann::json;

class CommandsTest : public AgentUserTest {
 protected:
  void SetUp() override {
    AgentUserTest::SetUp();
    root = base + "/root";
    mnt = base + "/mnt";
    sock = base + "/ctl.sock";
    ::mkdir(root.c_str(), 0755);
    ::mkdir(mnt.c_str(), 0755);
  }
  void mount(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"mount", root, mnt, "--socket", sock};
    args.insert(args.end(), extra.begin(), extra.end());
    RunResult r = leasefs(args, mnt, root);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  // `leasectl ARGS` (a shell line) in the mount, with scripts/agent-turn's
  // leasectl on PATH.
  RunResult sh(const std::string& line) {
    RunOptions o;
    o.cwd = mnt;
    const std::string bin = std::string(LEASECTL_PATH);
    return run_sh("PATH=" + q(bin.substr(0, bin.rfind('/'))) + ":$PATH; " + line, o);
  }
  static bool wait_until(const std::function<bool()>& done) {
    for (int i = 0; i < 1000; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  std::string root, mnt, sock;
};

TEST_F(CommandsTest, HelpAndVersionAdvanceNoTurnAndRevokeNoLease) {
  mount();
  ControlClient c(sock);
  ASSERT_TRUE(c.call("start", {{"description", "help"}}).value("ok", false));
  ASSERT_TRUE(c.call("grant", {{"reason", "this turn"}}).value("ok", false));
  const json before = c.call("status")["result"];
  const std::string wrapper = q(AGENT_TURN_PATH);
  for (const std::string& line : std::vector<std::string>{
           wrapper + " --help", wrapper + " -h", wrapper + " --version", "leasectl --version",
           "leasectl --help", "leasectl turn --help", "leasectl end-turn --help",
           "leasectl revoke --help", q(LEASEFS_BIN) + " --version"}) {
    RunResult r = sh(line + " </dev/null");
    EXPECT_EQ(r.exit_code, 0) << line << ": " << r.output;
    EXPECT_EQ(r.output.find("not found"), std::string::npos) << line << ": " << r.output;
  }
  const json after = c.call("status")["result"];
  EXPECT_EQ(after["turn"], before["turn"]) << after.dump();
  EXPECT_EQ(after["access_mode"], "leased") << after.dump();
  EXPECT_EQ(after["grants"].size(), 1u) << after.dump();
}

TEST_F(CommandsTest, OneVersionFromCMakeEverywhere) {
  mount();
  EXPECT_EQ(sh(q(LEASEFS_BIN) + " --version").output, "leasefs " LEASEFS_VERSION "\n");
  EXPECT_EQ(sh(q(LEASEFS_BIN) + " demo --version").output, "leasefs " LEASEFS_VERSION "\n");
  EXPECT_EQ(sh("leasectl --version").output, "leasectl (leasefs) " LEASEFS_VERSION "\n");
  EXPECT_EQ(sh(q(AGENT_TURN_PATH) + " --version").output,
            "leasefs-agent-turn (leasefs) " LEASEFS_VERSION "\n");
  RunResult mcp =
      sh("echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}' | "
         "leasectl mcp");
  ASSERT_EQ(mcp.exit_code, 0) << mcp.output;
  const json init = json::parse(mcp.output, nullptr, false);
  ASSERT_FALSE(init.is_discarded()) << mcp.output;
  EXPECT_EQ(init["result"]["serverInfo"]["version"], LEASEFS_VERSION) << mcp.output;
}

TEST_F(CommandsTest, DiffOfATurnThatNeverWasIsAnError) {
  mount();
  ASSERT_EQ(sh("leasectl start 'diff'").exit_code, 0);
  RunResult r = sh("leasectl diff --turn 99");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error[not_found]: turn 99 has not begun: the current turn is 0"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("no changes"), std::string::npos) << r.output;
  r = sh("leasectl diff --turn 0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(CommandsTest, DurationsAreWrittenAndShownWithUnits) {
  RunResult bad = run_argv({LEASEFS_BIN, "mount", root, mnt, "--socket", sock, "--ask=5parsecs"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("'5parsecs' is not a wait"), std::string::npos) << bad.output;
  mount({"--ask=5m"});
  ASSERT_EQ(sh("leasectl start 'units'").exit_code, 0);
  RunResult r = sh("leasectl status");
  EXPECT_NE(r.output.find("on, 5m (set by the mount)"), std::string::npos) << r.output;
  r = sh("leasectl grant --reason two --ttl 2h");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Whole seconds have passed since the grant, or not: either way, in units.
  EXPECT_TRUE(r.output.find("expires in 2h  ") != std::string::npos ||
              r.output.find("expires in 1h 59m  ") != std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("7200s"), std::string::npos) << r.output;
  r = sh("leasectl ask 90s");
  EXPECT_NE(r.output.find("waits 1m 30s for a person"), std::string::npos) << r.output;
}

TEST_F(CommandsTest, ForegroundLogsGoToStderrAndTheGitExcludeIsASentence) {
  RunOptions in_root;
  in_root.cwd = root;
  ASSERT_EQ(run_sh("git init -q .", in_root).exit_code, 0);
  mounts.push_back(mnt);
  const std::string out = base + "/fg.out", err = base + "/fg.err";
  RunResult bg =
      run_sh(q(LEASEFS_BIN) + " mount " + q(root) + " " + q(mnt) + " --socket " + q(sock) +
             " --foreground > " + q(out) + " 2> " + q(err) + " < /dev/null & echo $!");
  ASSERT_EQ(bg.exit_code, 0) << bg.output;
  pids.push_back(static_cast<pid_t>(std::stol(bg.output)));
  ASSERT_TRUE(wait_until([&] { return read_text(out).find("mounted") != std::string::npos; }))
      << read_text(err);
  RunResult un = run_argv({LEASEFS_BIN, "unmount", mnt});
  ASSERT_EQ(un.exit_code, 0) << un.output;
  ASSERT_TRUE(wait_until([&] { return ::kill(pids.back(), 0) != 0; }));

  // stdout: the outcome, one line; stderr: the log, in the order it was written.
  EXPECT_EQ(read_text(out), "mounted " + root + " at " + mnt + " (socket " + sock + ")\n");
  const std::string log = read_text(err);
  EXPECT_NE(log.find("[info] Added /.longrun/ to the repository's .git/info/exclude, so git "
                     "leaves leasefs's state out of commits.\n"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("[info] control: listening on " + sock), std::string::npos) << log;
  EXPECT_LT(log.find("control: listening"), log.find("leaving " + mnt)) << log;
}

TEST_F(CommandsTest, WatchSaysPlainlyThatTheDaemonWentAway) {
  mount();
  const std::string out = base + "/w.out", err = base + "/w.err", rc = base + "/w.rc";
  RunResult bg = sh("(leasectl --json watch > " + q(out) + " 2> " + q(err) + "; echo $? > " +
                    q(rc) + ") < /dev/null > /dev/null 2>&1 & echo $!");
  ASSERT_EQ(bg.exit_code, 0) << bg.output;
  pids.push_back(static_cast<pid_t>(std::stol(bg.output)));
  ASSERT_TRUE(wait_until([&] { return !read_text(out).empty(); })) << read_text(err);
  RunResult un = run_argv({LEASEFS_BIN, "unmount", mnt});
  ASSERT_EQ(un.exit_code, 0) << un.output;
  ASSERT_TRUE(wait_until([&] { return !read_text(rc).empty(); }));
  EXPECT_EQ(read_text(rc), "3\n");
  const std::string said = read_text(err);
  EXPECT_NE(said.find("the daemon went away"), std::string::npos) << said;
  EXPECT_EQ(said.find("start one with"), std::string::npos) << said;
}

TEST_F(CommandsTest, ARequestOnAPausedTaskIsRefusedSayingWhatToDo) {
  mount();
  ASSERT_EQ(sh("leasectl start 'pause me'").exit_code, 0);
  ASSERT_EQ(sh("leasectl checkpoint --summary s --next n --status paused").exit_code, 0);
  RunResult r = sh("leasectl request --reason 'edit a' --path a.txt");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error[not_in_progress]: cannot ask for a lease: task T_"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("is paused; run `leasectl resume` first"), std::string::npos) << r.output;
  // Nothing was left pending to go stale: after the resume, one request is enough.
  ASSERT_EQ(sh("leasectl resume").exit_code, 0);
  r = sh("leasectl request --reason 'edit a' --path a.txt");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("R_0001"), std::string::npos) << r.output;
  r = sh("leasectl approve R_0001");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(CommandsTest, ARequestWithNoPathShowsTheWholeTreeItWillCover) {
  mount();
  ASSERT_EQ(sh("leasectl start 'scope'").exit_code, 0);
  RunResult r = sh("leasectl request --reason 'anything'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("paths **  "), std::string::npos) << r.output;
  r = sh("leasectl approve R_0001");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("paths **  "), std::string::npos) << r.output;
  // And it does cover every depth.
  r = sh("mkdir -p a/b/c && echo x > a/b/c/d.txt");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(CommandsTest, RequestsAndGrantsListWhatIsPendingAndInForce) {
  mount();
  ASSERT_EQ(sh("leasectl start 'lists'").exit_code, 0);
  RunResult r = sh("leasectl requests");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "no request waits for an answer\n");
  r = sh("leasectl grants");
  EXPECT_EQ(r.output, "no grant in force in turn 0: the tree is read-only\n");
  ASSERT_EQ(sh("leasectl request --reason 'edit a' --path a.txt").exit_code, 0);
  ASSERT_EQ(sh("leasectl request --reason 'edit b' --path b.txt").exit_code, 0);
  r = sh("leasectl requests");
  EXPECT_EQ(r.output.find("R_0001  pending  turn 0  paths a.txt  \"edit a\"  by uid 0"), 0u)
      << r.output;
  EXPECT_NE(r.output.find("\nR_0002  pending  turn 0  paths b.txt"), std::string::npos) << r.output;
  json list = json::parse(sh("leasectl --json requests").output, nullptr, false);
  ASSERT_TRUE(list.is_array()) << list.dump();
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[1]["id"], "R_0002");

  ASSERT_EQ(sh("leasectl approve R_0002").exit_code, 0);
  r = sh("leasectl grants");
  EXPECT_EQ(r.output.find("G_0001  turn 0  paths b.txt"), 0u) << r.output;
  list = json::parse(sh("leasectl --json grants").output, nullptr, false);
  ASSERT_TRUE(list.is_array()) << list.dump();
  ASSERT_EQ(list.size(), 1u) << list.dump();
  EXPECT_EQ(list[0]["id"], "G_0001");
  EXPECT_EQ(json::parse(sh("leasectl --json requests").output, nullptr, false).size(), 1u);
}

// `leasectl audit show` reads the audit log for root and approvers only; it
// filters by turn, op and path; a name the agent chose is shown inert, and
// --json carries it byte for byte.
TEST_F(CommandsTest, AuditShowIsForApproversFiltersByTurnOpPathAndShowsNamesInert) {
  const auto [uid, gid] = add_user("lfsaud");
  ASSERT_EQ(run_argv({"chown", users.back() + ":", root}).exit_code, 0);
  mount({"--agent", users.back()});
  ControlClient c(sock);
  ASSERT_TRUE(c.call("start", {{"description", "audit"}}).value("ok", false));
  const uint64_t first = c.call("status")["result"].value("turn", uint64_t{0});
  const std::string evil = "evil\x1b]0;pwned\x07.txt";
  RunResult w = as_user(uid, gid, "printf x > " + q(evil) + "; printf x > b.txt", mnt);
  ASSERT_TRUE(c.call("turn").value("ok", false));
  w = as_user(uid, gid, "printf x > c.txt", mnt);
  const std::string ctl = "leasectl --socket " + q(sock) + " ";
  auto records = [&](const std::string& args) {
    json r = json::parse(sh(ctl + "--json audit show " + args).output, nullptr, false);
    return r.is_object() ? r["result"].value("records", json::array()) : json::array();
  };
  auto paths = [](const json& recs) {
    std::vector<std::string> out;
    for (const auto& e : recs) {
      if (e.contains("path")) out.push_back(e["path"]);
    }
    return out;
  };
  ASSERT_TRUE(wait_until([&] {
    auto p = paths(records("c.txt"));
    return !p.empty();
  }));

  // The agent may not read it.
  RunResult denied =
      as_user(uid, gid, q(LEASECTL_PATH) + " --socket " + q(sock) + " audit show", mnt);
  EXPECT_EQ(denied.exit_code, 1) << denied.output;
  EXPECT_NE(denied.output.find("forbidden"), std::string::npos) << denied.output;

  // By turn: the first turn's refusals, not the second's.
  std::vector<std::string> in_first = paths(records("--turn " + std::to_string(first)));
  EXPECT_NE(std::find(in_first.begin(), in_first.end(), "b.txt"), in_first.end());
  EXPECT_NE(std::find(in_first.begin(), in_first.end(), evil), in_first.end());
  EXPECT_EQ(std::find(in_first.begin(), in_first.end(), "c.txt"), in_first.end());
  // By path, and by op.
  const json b = records("b.txt");
  ASSERT_FALSE(b.empty());
  for (const auto& e : b) EXPECT_EQ(e.value("path", std::string()), "b.txt") << e.dump();
  const std::string op = b[0].value("op", std::string());
  ASSERT_FALSE(op.empty()) << b.dump();
  const json by_op = records("--op " + q(op));
  ASSERT_FALSE(by_op.empty());
  for (const auto& e : by_op) EXPECT_EQ(e.value("op", std::string()), op) << e.dump();

  // Shown inert: no escape sequence reaches the terminal; --json keeps the bytes.
  RunResult human = sh(ctl + "audit show --turn " + std::to_string(first));
  ASSERT_EQ(human.exit_code, 0) << human.output;
  EXPECT_NE(human.output.find("b.txt"), std::string::npos) << human.output;
  EXPECT_EQ(human.output.find('\x1b'), std::string::npos) << human.output;
  EXPECT_EQ(human.output.find('\x07'), std::string::npos) << human.output;
}

}  // namespace
}  // namespace leasefs::test

namespace leasefs::test {
namespace {

// The daemon runs as root and the agent owns the tree: what the agent plants in
// .git (an info symlink, a .git file naming another directory) never leads its
// exclude write out of the tree.
TEST_F(CommandsTest, GitExcludeFollowsNoNameTheAgentPlanted) {
  const std::string outside = base + "/outside";
  ::mkdir(outside.c_str(), 0755);
  ::mkdir((root + "/.git").c_str(), 0755);
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/.git/info").c_str()), 0);
  mounts.push_back(mnt);
  mount();
  EXPECT_NE(::access((outside + "/exclude").c_str(), F_OK), 0) << "written through a symlink";
  ASSERT_EQ(run_argv({LEASEFS_BIN, "unmount", mnt}).exit_code, 0);

  // A linked work tree: .git is a file naming a directory elsewhere.
  ASSERT_EQ(::unlink((root + "/.git/info").c_str()), 0);
  ASSERT_EQ(::rmdir((root + "/.git").c_str()), 0);
  std::ofstream(root + "/.git") << "gitdir: " << outside << "\n";
  mount();
  EXPECT_NE(::access((outside + "/info").c_str(), F_OK), 0) << "followed a .git file";
  ASSERT_EQ(run_argv({LEASEFS_BIN, "unmount", mnt}).exit_code, 0);
}

}  // namespace
}  // namespace leasefs::test

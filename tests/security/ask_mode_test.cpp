// Ask mode (leasefs mount --ask): an unleased mutation waits for a person instead
// of failing. Attack classes: getting a wider grant than the operation that was
// asked for (a name a glob would read as a pattern, a second path under the same
// approval), approving one's own ask, asking for .longrun, burying the approver
// (the bound), and leaving a waiter behind (killed, timed out, end of turn).
// Every agent is a real process of uid 65534 (python3 reports errno as its exit
// status); every ask is answered or ended before the daemon goes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

constexpr int kEacces = 13;
constexpr int kEintr = 4;

// A python3 agent (uid 65534) running `code`; its exit status is the errno of
// the first OSError, 0 when all went through.
pid_t agent_python(const std::string& code) {
  const std::string wrapped =
      "import os, sys\ntry:\n" + code + "\nexcept OSError as e:\n    sys.exit(e.errno)\n";
  return spawn_agent([wrapped] {
    ::chdir("/");
    ::execlp("python3", "python3", "-c", wrapped.c_str(), static_cast<char*>(nullptr));
    return 127;
  });
}

std::string write_file(const std::string& path, const std::string& text) {
  return "    open('" + path + "', 'w').write('" + text + "')";
}

class AskMode : public ::testing::Test {
 protected:
  // Mounts after making `dirs` under work/ (before the mount: once it is up, a
  // write of the test's own would be asked too). work/ and its directories are
  // 0777, so every refusal is the gate's.
  void mount(const std::vector<std::string>& extra, const std::vector<std::string>& dirs = {}) {
    for (const std::string& dir : std::vector<std::string>{"", "/else"}) {
      ::mkdir((d_.root() + "/work" + dir).c_str(), 0777);
      ::chmod((d_.root() + "/work" + dir).c_str(), 0777);
    }
    for (const std::string& dir : dirs) {
      ::mkdir((d_.root() + "/work/" + dir).c_str(), 0777);
      ::chmod((d_.root() + "/work/" + dir).c_str(), 0777);
    }
    auto m = d_.mount(extra);
    ASSERT_EQ(m.exit_code, 0) << m.output;
    root_ = std::make_unique<ControlClient>(d_.socket());
    ASSERT_TRUE(root_->call("start", {{"description", "ask mode"}}).value("ok", false));
  }
  void TearDown() override {
    // End every ask before the daemon goes (the fixture then unmounts and kills).
    if (root_) root_->call("end-turn");
    for (pid_t p : agents_) kill_child(p);
  }

  json status() { return root_->call("status")["result"]; }
  // The pending requests of this turn once there are `n` of them (or what there is
  // after 20 s).
  json pending(size_t n) {
    json p;
    for (int i = 0; i < 2000; ++i) {
      p = status()["pending_requests"];
      if (p.size() >= n) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return p;
  }
  pid_t agent(const std::string& code) {
    pid_t p = agent_python(code);
    agents_.push_back(p);
    return p;
  }
  int wait(pid_t p, int timeout_ms = 60000) {
    int rc = wait_child(p, timeout_ms);
    std::erase(agents_, p);
    return rc;
  }
  std::string work(const std::string& name) const { return d_.root() + "/work/" + name; }
  std::string slurp(const std::string& path) const {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  ControlDaemon d_;
  std::unique_ptr<ControlClient> root_;
  std::vector<pid_t> agents_;
};

TEST_F(AskMode, ApprovedWriteCompletesUnderAGrantForThatPathOnly) {
  mount({"--ask=60"});
  pid_t a = agent(write_file(work("a.txt"), "asked"));
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  EXPECT_TRUE(p[0].value("ask", false)) << p.dump();
  EXPECT_EQ(p[0]["paths"], json::array({"work/a.txt"})) << p.dump();
  EXPECT_EQ(p[0]["requester_uid"], kAgentUid);
  EXPECT_EQ(p[0]["requester_pid"], a);
  EXPECT_NE(p[0].value("requester_command", "").find("python3"), std::string::npos) << p.dump();
  EXPECT_NE(p[0].value("reason", "").find("create"), std::string::npos) << p.dump();

  json r = root_->call("approve", {{"id", p[0]["id"]}});
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_EQ(r["result"]["grant"]["paths"], json::array({"work/a.txt"})) << r.dump();
  EXPECT_EQ(wait(a), 0);
  EXPECT_EQ(slurp(work("a.txt")), "asked");

  // The approval named one path: a file elsewhere is asked again, and rejected.
  // (Beside work/a.txt a new file is a temporary sibling, as for any grant
  // naming one file: DESIGN.md, "Path globs".)
  pid_t b = agent(write_file(work("else/b.txt"), "more"));
  p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  EXPECT_EQ(p[0]["paths"], json::array({"work/else/b.txt"}));
  ASSERT_TRUE(root_->call("reject", {{"id", p[0]["id"]}}).value("ok", false));
  EXPECT_EQ(wait(b), kEacces);
  EXPECT_NE(::access(work("else/b.txt").c_str(), F_OK), 0);
}

TEST_F(AskMode, TimeoutFailsAndClosesTheRequestSoNoLaterApprovalGrantsIt) {
  mount({"--ask=4"});
  pid_t a = agent(write_file(work("late.txt"), "x"));
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  const std::string id = p[0]["id"];
  EXPECT_EQ(wait(a), kEacces);
  EXPECT_NE(::access(work("late.txt").c_str(), F_OK), 0);
  // Closed by the daemon: nothing pending, and approving it now issues no grant.
  for (int i = 0; i < 500 && !status()["pending_requests"].empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(status()["pending_requests"].empty()) << status().dump();
  json r = root_->call("approve", {{"id", id}});
  EXPECT_FALSE(r.value("ok", true)) << r.dump();
  EXPECT_TRUE(status()["grants"].empty());
}

TEST_F(AskMode, EndOfTurnFailsEveryParkedOperation) {
  mount({"--ask=60"}, {"d1"});
  // Not in one directory: a parked create holds its directory's lock, so a
  // lookup through it would wait in the kernel before reaching the daemon.
  pid_t a = agent(write_file(work("else/x.txt"), "x"));
  pid_t b = agent("    os.mkdir('" + work("d1/sub") + "')");
  ASSERT_EQ(pending(2).size(), 2u);
  ASSERT_TRUE(root_->call("turn").value("ok", false));
  EXPECT_EQ(wait(a), kEacces);
  EXPECT_EQ(wait(b), kEacces);
  EXPECT_NE(::access(work("else/x.txt").c_str(), F_OK), 0);
  EXPECT_NE(::access(work("d1/sub").c_str(), F_OK), 0);
  EXPECT_EQ(status()["ask"]["waiting"], 0);
}

TEST_F(AskMode, AKilledWaiterIsDroppedAndLeavesNothingBehind) {
  mount({"--ask=600"});
  pid_t a = agent(write_file(work("killed.txt"), "x"));
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u);
  ::kill(a, SIGKILL);
  // The kernel interrupts the parked request; the daemon answers it at once,
  // long before the 600 s the ask would wait.
  EXPECT_EQ(wait(a, 60000), 128 + SIGKILL);
  for (int i = 0; i < 500 && status()["ask"]["waiting"] != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  json st = status();
  EXPECT_EQ(st["ask"]["waiting"], 0) << st.dump();
  EXPECT_TRUE(st["pending_requests"].empty()) << st.dump();
  EXPECT_NE(::access(work("killed.txt").c_str(), F_OK), 0);
  // An approval that arrives afterwards finds no request to grant.
  EXPECT_FALSE(root_->call("approve", {{"id", p[0]["id"]}}).value("ok", true));
}

TEST_F(AskMode, ASignalledWaiterGetsEintr) {
  mount({"--ask=600"});
  // SIGALRM with a handler: the write is interrupted, not the process.
  pid_t a = agent(
      "    import signal\n"
      "    def interrupted(*args):\n"
      "        raise InterruptedError()\n"
      "    signal.signal(signal.SIGALRM, interrupted)\n"
      "    signal.setitimer(signal.ITIMER_REAL, 1.5)\n"
      "    try:\n"
      "        os.open('" +
      work("sig.txt") +
      "', os.O_CREAT | os.O_WRONLY, 0o644)\n"
      "    except InterruptedError:\n"
      "        sys.exit(4)");
  ASSERT_EQ(pending(1).size(), 1u);
  EXPECT_EQ(wait(a), kEintr);
  EXPECT_NE(::access(work("sig.txt").c_str(), F_OK), 0);
}

TEST_F(AskMode, PastTheBoundAnOperationFailsAtOnce) {
  // One directory each: a parked create holds its directory's lock in the kernel.
  constexpr int kBound = 16;
  std::vector<std::string> dirs;
  for (int i = 0; i <= kBound; ++i) dirs.push_back("b" + std::to_string(i));
  mount({"--ask=600"}, dirs);
  std::vector<pid_t> parked;
  for (int i = 0; i < kBound; ++i) {
    parked.push_back(agent(write_file(work("b" + std::to_string(i) + "/f"), "x")));
  }
  ASSERT_EQ(pending(kBound).size(), static_cast<size_t>(kBound));
  pid_t extra = agent(write_file(work("b16/f"), "x"));
  // It fails at once, while the 600 s of the others run on.
  EXPECT_EQ(wait(extra, 60000), kEacces);
  EXPECT_EQ(status()["pending_requests"].size(), static_cast<size_t>(kBound));
  ASSERT_TRUE(root_->call("end-turn").value("ok", false));
  for (pid_t p : parked) EXPECT_EQ(wait(p), kEacces);
}

TEST_F(AskMode, TheAgentCannotApproveItsOwnAskNorTurnAskModeOff) {
  mount({"--ask=60"});
  pid_t a = agent(write_file(work("self.txt"), "x"));
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u);
  const std::string id = p[0]["id"];
  pid_t approver = spawn_agent([&] {
    ControlClient c(d_.socket());
    json r1 = c.call("approve", {{"id", id}});
    json r2 = c.call("ask", {{"wait", "off"}});
    const bool forbidden = r1["error"]["code"] == "forbidden" && r2["error"]["code"] == "forbidden";
    return forbidden ? 0 : 1;
  });
  EXPECT_EQ(wait_child(approver, 30000), 0);
  EXPECT_EQ(status()["pending_requests"].size(), 1u);
  EXPECT_TRUE(status()["grants"].empty());
  ASSERT_TRUE(root_->call("reject", {{"id", id}}).value("ok", false));
  EXPECT_EQ(wait(a), kEacces);
}

TEST_F(AskMode, NamesAGlobWouldReadAndLongrunAreNeverAsked) {
  mount({"--ask=600"});
  // A file called `*` must not become a grant for everything in work/.
  for (const std::string name : {"*", "a?b", "**"}) {
    pid_t a = agent(write_file(work(name), "x"));
    EXPECT_EQ(wait(a, 60000), kEacces) << name;
  }
  pid_t l = agent(write_file(d_.root() + "/.longrun/status.md", "forged"));
  EXPECT_EQ(wait(l, 60000), kEacces);
  EXPECT_TRUE(status()["pending_requests"].empty()) << status().dump();
}

TEST_F(AskMode, ATaskTurnsAskModeOnAndOffOverTheMount) {
  mount({});
  pid_t a = agent(write_file(work("off.txt"), "x"));
  EXPECT_EQ(wait(a, 60000), kEacces);  // the mount's default: off
  json on = root_->call("ask", {{"wait", "30s"}});
  ASSERT_TRUE(on.value("ok", false)) << on.dump();
  EXPECT_EQ(on["result"]["ask"]["timeout_ms"], 30000);
  EXPECT_EQ(on["result"]["ask"]["set_by"], "task");
  pid_t b = agent(write_file(work("on.txt"), "x"));
  ASSERT_EQ(pending(1).size(), 1u);
  // Turning it off ends what waits.
  ASSERT_TRUE(root_->call("ask", {{"wait", "off"}}).value("ok", false));
  EXPECT_EQ(wait(b), kEacces);
  EXPECT_FALSE(root_->call("ask", {{"wait", "forever"}}).value("ok", true));
}

TEST_F(AskMode, AnApprovedDirectoryRenameCoversItsSubtreeAtBothNames) {
  ::mkdir((d_.root() + "/work").c_str(), 0777);
  ::mkdir((d_.root() + "/work/old").c_str(), 0777);
  std::ofstream(d_.root() + "/work/old/file") << "kept";
  mount({"--ask=60"}, {"old"});
  pid_t a = agent("    os.rename('" + work("old") + "', '" + work("new") + "')");
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0]["paths"], json::array({"work/old/**", "work/new/**"})) << p.dump();
  ASSERT_TRUE(root_->call("approve", {{"id", p[0]["id"]}}).value("ok", false));
  EXPECT_EQ(wait(a), 0);
  EXPECT_EQ(slurp(work("new/file")), "kept");
}

// A write that waited and was approved was let through: it is no refusal, and
// the approver's list of refusals does not say otherwise. One rejected is.
TEST_F(AskMode, AnApprovedWriteIsNotListedAsARefusalAndARejectedOneIs) {
  mount({"--ask=60"});
  pid_t a = agent(write_file(work("a.txt"), "asked"));
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  ASSERT_TRUE(root_->call("approve", {{"id", p[0]["id"]}}).value("ok", false));
  EXPECT_EQ(wait(a), 0);
  pid_t b = agent(write_file(work("else/b.txt"), "more"));
  p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  ASSERT_TRUE(root_->call("reject", {{"id", p[0]["id"]}}).value("ok", false));
  EXPECT_EQ(wait(b), kEacces);
  const json refusals = status()["recent_refusals"];  // status takes what was gathered
  ASSERT_EQ(refusals.size(), 1u) << refusals.dump();
  EXPECT_EQ(refusals[0]["path"], "work/else/b.txt") << refusals.dump();
  EXPECT_EQ(refusals[0]["reason"], "out_of_scope") << refusals.dump();  // a grant names a.txt
}

}  // namespace
}  // namespace leasefs::test

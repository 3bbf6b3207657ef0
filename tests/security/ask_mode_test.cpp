// Ask mode (leasefs mount --ask): an unleased open of an existing file waits for a
// person instead of failing; any other unleased mutation (which holds a lock in
// the kernel) fails at once with its request filed, so a retry goes through once
// approved. Attack classes: freezing a directory or the turn hook behind parked
// operations, burying the approver in one operation repeated, getting a wider grant than the
// operation that was asked for (a name a glob would read as a pattern, a second path under the same
// approval), approving one's own ask, asking for .longrun, burying the approver
// (the bound), and leaving a waiter behind (killed, timed out, end of turn).
// Every agent is a real process of uid 65534 (python3 reports errno as its exit
// status); every ask is answered or ended before the daemon goes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

  // work/kept.txt, 0666, made before the mount (once it is up, the test's own
  // write would be asked too).
  void mount_with_kept(const std::vector<std::string>& extra) {
    for (const char* dir : {"/work", "/work/else"}) {
      ::mkdir((d_.root() + dir).c_str(), 0777);
      ::chmod((d_.root() + dir).c_str(), 0777);
    }
    for (const std::string& f : std::vector<std::string>{"kept.txt", "else/kept.txt"}) {
      std::ofstream(d_.root() + "/work/" + f) << "kept";
      ::chmod((d_.root() + "/work/" + f).c_str(), 0666);
    }
    std::ofstream(d_.root() + "/top.txt") << "top";
    ::chmod((d_.root() + "/top.txt").c_str(), 0666);
    ::chmod(d_.root().c_str(), 0777);
    mount(extra);
  }
  // A read, a stat and a listing in `dir`, as the agent: 0 if all answered.
  pid_t look_into(const std::string& dir, const std::string& file) {
    return agent("    open('" + dir + "/" + file + "').read()\n    os.stat('" + dir + "/" + file +
                 "')\n    os.listdir('" + dir + "')");
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

  // A child that did not finish in time may be stuck in the kernel behind the
  // daemon: it is killed and reaped only once the daemon is gone (d_ goes first).
  struct Stragglers {
    std::vector<pid_t> pids;
    ~Stragglers() {
      for (pid_t p : pids) kill_child(p);
    }
  };
  // The exit status of `p` if it ends within `ms`; else -2, and it is left for later.
  int finish_within(pid_t p, int ms) {
    for (int i = 0; i < ms / 10; ++i) {
      int status = 0;
      if (::waitpid(p, &status, WNOHANG) == p) {
        std::erase(agents_, p);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::erase(agents_, p);
    late_.pids.push_back(p);
    return -2;
  }

  Stragglers late_;
  ControlDaemon d_;
  std::unique_ptr<ControlClient> root_;
  std::vector<pid_t> agents_;
};

// `n` threads of one agent each opening `path` with `flags`; exits 0 when every
// one got `want` (an errno, or 0).
std::string threads_opening(int n, const std::string& path_expr, const std::string& flags,
                            int want) {
  return "    import threading\n"
         "    got = []\n"
         "    def one(i):\n"
         "        try:\n"
         "            fd = os.open(" +
         path_expr + ", " + flags +
         ", 0o644)\n"
         "            os.write(fd, b'x')\n"
         "            os.close(fd)\n"
         "            got.append(0)\n"
         "        except OSError as e:\n"
         "            got.append(e.errno)\n"
         "    ts = [threading.Thread(target=one, args=(i,)) for i in range(" +
         std::to_string(n) +
         ")]\n"
         "    [t.start() for t in ts]\n"
         "    [t.join() for t in ts]\n"
         "    sys.exit(0 if got.count(" +
         std::to_string(want) + ") == len(got) else 1)";
}

TEST_F(AskMode, ApprovedWriteCompletesUnderAGrantForThatPathOnly) {
  mount({"--ask=60"});
  // A create holds its directory's lock in the kernel: refused at once, and
  // filed, so that the tool's retry goes through once a person approves.
  pid_t a = agent(write_file(work("a.txt"), "asked"));
  EXPECT_EQ(wait(a), kEacces);
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  EXPECT_TRUE(p[0].value("ask", false)) << p.dump();
  EXPECT_EQ(p[0]["paths"], json::array({"work/a.txt"})) << p.dump();
  EXPECT_EQ(p[0]["requester_uid"], kAgentUid);
  EXPECT_NE(p[0].value("requester_command", "").find("python3"), std::string::npos) << p.dump();
  EXPECT_NE(p[0].value("reason", "").find("create"), std::string::npos) << p.dump();

  json r = root_->call("approve", {{"id", p[0]["id"]}});
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_EQ(r["result"]["grant"]["paths"], json::array({"work/a.txt"})) << r.dump();
  a = agent(write_file(work("a.txt"), "asked"));
  EXPECT_EQ(wait(a), 0);
  EXPECT_EQ(slurp(work("a.txt")), "asked");

  // The approval named one path: a file elsewhere is asked again, and rejected.
  // (Beside work/a.txt a new file is a temporary sibling, as for any grant
  // naming one file: DESIGN.md, "Path globs".)
  pid_t b = agent(write_file(work("else/b.txt"), "more"));
  EXPECT_EQ(wait(b), kEacces);
  p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  EXPECT_EQ(p[0]["paths"], json::array({"work/else/b.txt"}));
  ASSERT_TRUE(root_->call("reject", {{"id", p[0]["id"]}}).value("ok", false));
  EXPECT_NE(::access(work("else/b.txt").c_str(), F_OK), 0);
}

// An open for writing of an existing file holds no directory lock: it waits.
TEST_F(AskMode, ApprovedOpenOfAnExistingFileCompletes) {
  mount_with_kept({"--ask=60"});
  pid_t a = agent(write_file(work("kept.txt"), "asked"));
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  EXPECT_EQ(p[0]["requester_pid"], a);
  EXPECT_NE(p[0].value("reason", "").find("open"), std::string::npos) << p.dump();
  ASSERT_TRUE(root_->call("approve", {{"id", p[0]["id"]}}).value("ok", false));
  EXPECT_EQ(wait(a), 0);
  EXPECT_EQ(slurp(work("kept.txt")), "asked");
}

TEST_F(AskMode, TimeoutFailsAndClosesTheRequestSoNoLaterApprovalGrantsIt) {
  mount_with_kept({"--ask=4"});
  pid_t a = agent(write_file(work("kept.txt"), "x"));
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  const std::string id = p[0]["id"];
  EXPECT_EQ(wait(a), kEacces);
  EXPECT_EQ(slurp(work("kept.txt")), "kept");
  // Closed by the daemon: nothing pending, and approving it now issues no grant.
  for (int i = 0; i < 500 && !status()["pending_requests"].empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(status()["pending_requests"].empty()) << status().dump();
  json r = root_->call("approve", {{"id", id}});
  EXPECT_FALSE(r.value("ok", true)) << r.dump();
  EXPECT_TRUE(status()["grants"].empty());
}

TEST_F(AskMode, EndOfTurnFailsEveryParkedOperationAndClosesEveryAsk) {
  mount_with_kept({"--ask=60"});
  pid_t a = agent(write_file(work("kept.txt"), "x"));
  pid_t b = agent("    os.mkdir('" + work("sub") + "')");
  EXPECT_EQ(wait(b), kEacces);  // filed, refused at once
  ASSERT_EQ(pending(2).size(), 2u);
  ASSERT_TRUE(root_->call("turn").value("ok", false));
  EXPECT_EQ(wait(a), kEacces);
  EXPECT_EQ(slurp(work("kept.txt")), "kept");
  EXPECT_TRUE(status()["pending_requests"].empty()) << status().dump();
  EXPECT_EQ(status()["ask"]["waiting"], 0);
}

TEST_F(AskMode, AKilledWaiterIsDroppedAndLeavesNothingBehind) {
  mount_with_kept({"--ask=600"});
  pid_t a = agent(write_file(work("kept.txt"), "x"));
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
  EXPECT_EQ(slurp(work("kept.txt")), "kept");
  // An approval that arrives afterwards finds no request to grant.
  EXPECT_FALSE(root_->call("approve", {{"id", p[0]["id"]}}).value("ok", true));
}

TEST_F(AskMode, ASignalledWaiterGetsEintr) {
  mount_with_kept({"--ask=600"});
  // SIGALRM with a handler: the write is interrupted, not the process.
  pid_t a = agent(
      "    import signal\n"
      "    def interrupted(*args):\n"
      "        raise InterruptedError()\n"
      "    signal.signal(signal.SIGALRM, interrupted)\n"
      "    signal.setitimer(signal.ITIMER_REAL, 1.5)\n"
      "    try:\n"
      "        os.open('" +
      work("kept.txt") +
      "', os.O_WRONLY)\n"
      "    except InterruptedError:\n"
      "        sys.exit(4)");
  ASSERT_EQ(pending(1).size(), 1u);
  EXPECT_EQ(wait(a), kEintr);
  EXPECT_EQ(slurp(work("kept.txt")), "kept");
}

TEST_F(AskMode, PastTheBoundAnOperationFailsAtOnce) {
  // At most 16 distinct asks are unanswered at once, waiting or filed.
  constexpr int kBound = 16;
  std::vector<std::string> dirs;
  for (int i = 0; i <= kBound; ++i) dirs.push_back("b" + std::to_string(i));
  mount({"--ask=600"}, dirs);
  for (int i = 0; i < kBound; ++i) {
    EXPECT_EQ(wait(agent(write_file(work("b" + std::to_string(i) + "/f"), "x"))), kEacces);
  }
  ASSERT_EQ(pending(kBound).size(), static_cast<size_t>(kBound));
  EXPECT_EQ(wait(agent(write_file(work("b16/f"), "x"))), kEacces);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(status()["pending_requests"].size(), static_cast<size_t>(kBound));
  // Answered, one makes room for the next.
  ASSERT_TRUE(
      root_->call("reject", {{"id", status()["pending_requests"][0]["id"]}}).value("ok", false));
  EXPECT_EQ(wait(agent(write_file(work("b16/f"), "x"))), kEacces);
  EXPECT_EQ(pending(kBound).size(), static_cast<size_t>(kBound));
}

TEST_F(AskMode, TheAgentCannotApproveItsOwnAskNorTurnAskModeOff) {
  mount_with_kept({"--ask=60"});
  pid_t a = agent(write_file(work("kept.txt"), "x"));
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
  // A file called `*` must not become a grant for everything in work/. Nor may a
  // name that is not UTF-8 (b"bad\xff", written "bad\udcff" in python's source):
  // a grant, JSON text, would name another path, and the file approved would be
  // only a temporary sibling, taken out at the turn's end.
  for (const std::string name : {"*", "a?b", "**", "bad\\udcff"}) {
    pid_t a = agent(write_file(work(name), "x"));
    EXPECT_EQ(wait(a, 60000), kEacces) << name;
  }
  pid_t l = agent(write_file(d_.root() + "/.longrun/status.md", "forged"));
  EXPECT_EQ(wait(l, 60000), kEacces);
  EXPECT_TRUE(status()["pending_requests"].empty()) << status().dump();
}

TEST_F(AskMode, ATaskTurnsAskModeOnAndOffOverTheMount) {
  mount_with_kept({});
  pid_t a = agent(write_file(work("off.txt"), "x"));
  EXPECT_EQ(wait(a, 60000), kEacces);  // the mount's default: off
  json on = root_->call("ask", {{"wait", "30s"}});
  ASSERT_TRUE(on.value("ok", false)) << on.dump();
  EXPECT_EQ(on["result"]["ask"]["timeout_ms"], 30000);
  EXPECT_EQ(on["result"]["ask"]["set_by"], "task");
  pid_t b = agent(write_file(work("kept.txt"), "x"));
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
  const std::string mv = "    os.rename('" + work("old") + "', '" + work("new") + "')";
  EXPECT_EQ(wait(agent(mv)), kEacces);
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0]["paths"], json::array({"work/old/**", "work/new/**"})) << p.dump();
  ASSERT_TRUE(root_->call("approve", {{"id", p[0]["id"]}}).value("ok", false));
  EXPECT_EQ(wait(agent(mv)), 0);
  EXPECT_EQ(slurp(work("new/file")), "kept");
}

// A write that waited and was approved was let through: it is no refusal, and
// the approver's list of refusals does not say otherwise. One rejected is.
TEST_F(AskMode, AnApprovedWriteIsNotListedAsARefusalAndARejectedOneIs) {
  mount_with_kept({"--ask=60"});
  pid_t a = agent(write_file(work("kept.txt"), "asked"));
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  ASSERT_TRUE(root_->call("approve", {{"id", p[0]["id"]}}).value("ok", false));
  EXPECT_EQ(wait(a), 0);
  pid_t b = agent(write_file(work("else/kept.txt"), "more"));
  p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  ASSERT_TRUE(root_->call("reject", {{"id", p[0]["id"]}}).value("ok", false));
  EXPECT_EQ(wait(b), kEacces);
  const json refusals = status()["recent_refusals"];  // status takes what was gathered
  ASSERT_EQ(refusals.size(), 1u) << refusals.dump();
  EXPECT_EQ(refusals[0]["path"], "work/else/kept.txt") << refusals.dump();
  EXPECT_EQ(refusals[0]["reason"], "out_of_scope") << refusals.dump();  // a grant names kept.txt
}

}  // namespace
}  // namespace leasefs::test

namespace leasefs::test {
namespace {

// Ask mode against the kernel's locks: a create, mkdir, unlink or rename holds its
// directory's lock while the daemon has it, so parking one froze the directory
// (lookups, listings and every create queued behind it, unkillable). Only opens
// of existing files wait now; the rest are refused at once and filed.
using AskModeLocks = AskMode;

TEST_F(AskModeLocks, ManyCreatesInOneDirectoryNeverFreezeIt) {
  mount_with_kept({"--ask=600"});
  // 150 unleased creates at once in work/, and 20 opens of work/kept.txt waiting.
  pid_t creators =
      agent(threads_opening(150, "'" + work("c%d") + "' % i", "os.O_CREAT | os.O_WRONLY", kEacces));
  pid_t openers = agent(threads_opening(20, "'" + work("kept.txt") + "'", "os.O_WRONLY", kEacces));
  ASSERT_GE(pending(1).size(), 1u);
  // Whatever waits, the directory answers.
  EXPECT_EQ(finish_within(look_into(d_.root() + "/work", "kept.txt"), 5000), 0);
  // Every create was answered at once (EACCES), none waits for the 600 s.
  EXPECT_EQ(finish_within(creators, 10000), 0);
  for (int i = 0; i < 500 && status()["ask"]["waiting"] == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The turn ends every waiting open.
  ASSERT_TRUE(root_->call("turn").value("ok", false));
  EXPECT_EQ(finish_within(openers, 10000), 0);
  EXPECT_EQ(status()["ask"]["waiting"], 0);
  for (int i = 0; i < 150; ++i) {
    EXPECT_NE(::access(work("c" + std::to_string(i)).c_str(), F_OK), 0) << i;
  }
}

TEST_F(AskModeLocks, TheTurnHookFromTheProjectRootEndsWhatWaits) {
  mount_with_kept({"--ask=600"});
  // The agent keeps asking for a create in the project root, and opens of a file
  // there wait.
  pid_t looper = agent(
      "    import errno\n"
      "    while True:\n"
      "        try:\n"
      "            os.close(os.open('" +
      d_.root() +
      "/new.txt', os.O_CREAT | os.O_WRONLY, 0o644))\n"
      "        except PermissionError:\n"
      "            pass");
  pid_t openers = agent(threads_opening(10, "'" + d_.root() + "/top.txt'", "os.O_WRONLY", kEacces));
  ASSERT_GE(pending(2).size(), 2u);
  // The hook as the host runs it: from the project root, found without --socket.
  const std::string root = d_.root();
  pid_t hook = spawn_agent([root] {
    if (::chdir(root.c_str()) != 0) return 90;
    ::unsetenv("LEASEFS_SOCKET");
    ::execl(LEASECTL_BIN, "leasectl", "--hook", "turn", static_cast<char*>(nullptr));
    return 127;
  });
  agents_.push_back(hook);
  EXPECT_EQ(finish_within(hook, 5000), 0);
  EXPECT_EQ(finish_within(openers, 10000), 0);
  EXPECT_EQ(finish_within(look_into(d_.root(), "top.txt"), 5000), 0);
  kill_child(looper);
  std::erase(agents_, looper);
  EXPECT_NE(::access((d_.root() + "/new.txt").c_str(), F_OK), 0);
}

TEST_F(AskModeLocks, ABurstOfOneOperationIsOneDecision) {
  mount_with_kept({"--ask=600"});
  // 200 opens of one file wait on one request; one approval lets all through.
  pid_t openers =
      agent(threads_opening(200, "'" + work("kept.txt") + "'", "os.O_WRONLY | os.O_APPEND", 0));
  json p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  p = status()["pending_requests"];
  ASSERT_EQ(p.size(), 1u) << p.dump();
  EXPECT_EQ(p[0]["paths"], json::array({"work/kept.txt"})) << p.dump();
  ASSERT_TRUE(root_->call("approve", {{"id", p[0]["id"]}}).value("ok", false));
  EXPECT_EQ(finish_within(openers, 30000), 0);
  EXPECT_EQ(slurp(work("kept.txt")), "kept" + std::string(200, 'x'));
  // 150 creates of one name while it is asked: one request.
  // (Not beside work/kept.txt: a new file there is a temporary sibling.)
  pid_t creators = agent(
      threads_opening(150, "'" + work("else/one.txt") + "'", "os.O_CREAT | os.O_WRONLY", kEacces));
  EXPECT_EQ(finish_within(creators, 10000), 0);
  p = pending(1);
  ASSERT_EQ(p.size(), 1u) << p.dump();
  EXPECT_EQ(p[0]["paths"], json::array({"work/else/one.txt"})) << p.dump();
  // Rejected, it is not asked again this turn.
  ASSERT_TRUE(root_->call("reject", {{"id", p[0]["id"]}}).value("ok", false));
  pid_t again = agent(write_file(work("else/one.txt"), "x"));
  EXPECT_EQ(finish_within(again, 10000), kEacces);
  EXPECT_TRUE(status()["pending_requests"].empty()) << status().dump();
}

}  // namespace
}  // namespace leasefs::test

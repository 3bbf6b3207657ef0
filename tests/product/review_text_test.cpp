// What a person reads is plain where it can be and inert where it must be:
// status.md quotes only what needs quoting, refusals say when and in which turn
// (and `status` shows one made a moment ago), `resume` and an undo conflict
// print real lines, and `watch` shows dates, filters by type and speaks JSON.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/agentuser_daemons.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using json = nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ReviewTextTest : public AgentUserTest {
 protected:
  void SetUp() override {
    AgentUserTest::SetUp();
    root = base + "/root";
    mnt = base + "/mnt";
    sock = base + "/ctl.sock";
    in_mnt.cwd = mnt;
    ::mkdir(root.c_str(), 0755);
    ::mkdir(mnt.c_str(), 0755);
    RunResult r = leasefs({"mount", root, mnt, "--socket", sock}, mnt, root);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  RunResult ctl(std::vector<std::string> args) {
    args.insert(args.begin(), {LEASECTL_PATH, "--socket", sock});
    RunOptions o;
    o.timeout_s = 60;
    return run_argv(args, o);
  }
  json ok(const std::string& cmd, json args = json::object()) {
    ControlClient c(sock);
    json r = c.call(cmd, std::move(args));
    EXPECT_TRUE(r.value("ok", false)) << cmd << ": " << r.dump();
    return r.value("result", json::object());
  }
  // `leasectl watch ARGS` with its stdout in `out`, until stop_watch().
  pid_t start_watch(const std::string& out, const std::vector<std::string>& args) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      ::dup2(fd, STDOUT_FILENO);
      std::vector<const char*> argv = {LEASECTL_PATH, "--socket", sock.c_str(), "watch"};
      for (const auto& a : args) argv.push_back(a.c_str());
      argv.push_back(nullptr);
      ::execv(LEASECTL_PATH, const_cast<char* const*>(argv.data()));
      ::_exit(127);
    }
    if (pid > 0) pids.push_back(pid);
    return pid;
  }
  static void stop_watch(pid_t pid) {
    ::kill(pid, SIGINT);
    ::waitpid(pid, nullptr, 0);
  }
  std::string root, mnt, sock;
  RunOptions in_mnt;
};

TEST_F(ReviewTextTest, StatusRightAfterARefusalShowsItWithTurnAndDate) {
  ok("start", {{"description", "plain"}});
  ok("turn");
  ASSERT_NE(run_sh("echo x > pay.cfg", in_mnt).exit_code, 0);
  // At once: no waiting for the refusal to be gathered.
  RunResult s = ctl({"status"});
  ASSERT_EQ(s.exit_code, 0) << s.output;
  EXPECT_TRUE(std::regex_search(
      s.output,
      std::regex(
          R"(\n  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  turn 1  create pay\.cfg  \(no_lease, pid \d+ sh\))")))
      << s.output;
  // status.md: plain where nothing needs quoting, with the turn and the time.
  const std::string md = mnt + "/.longrun/status.md";
  std::string text;
  for (int i = 0; i < 500 && text.find("create pay.cfg by sh") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    text = slurp(md);
  }
  EXPECT_TRUE(std::regex_search(
      text,
      std::regex(
          R"(\n- create pay\.cfg by sh \(pid \d+\): no_lease \(turn 1, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)\n)")))
      << text;
  EXPECT_NE(text.find("Task: T_"), std::string::npos) << text;
  EXPECT_NE(text.find(" — plain\n"), std::string::npos) << text;
}

TEST_F(ReviewTextTest, ResumePrintsTheCheckpointInRealLines) {
  ok("start", {{"description", "lines"}});
  ok("checkpoint", {{"summary", "did one\nand two"}, {"next", "three"}});
  RunResult r = ctl({"resume"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\n## Summary\ndid one\nand two\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nNext step: three\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("\\n"), std::string::npos) << r.output;
}

TEST_F(ReviewTextTest, AnUndoConflictIsSaidInRealLines) {
  ok("start", {{"description", "undo"}});
  const uint64_t t1 = ok("turn").value("turn", uint64_t{0});
  ok("grant", {{"reason", "one"}});
  ASSERT_EQ(run_sh("echo 1 > a", in_mnt).exit_code, 0);
  ok("turn");
  ok("grant", {{"reason", "two"}});
  ASSERT_EQ(run_sh("echo 2 > a", in_mnt).exit_code, 0);
  ok("turn");
  RunResult r = ctl({"undo", "--turn", std::to_string(t1)});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error[undo_conflict]: undo of turn " + std::to_string(t1) +
                          " refused: later turns changed the same paths:\n  a (changed again in "
                          "turn " +
                          std::to_string(t1 + 1) + ")\nundo those turns first"),
            std::string::npos)
      << r.output;
}

TEST_F(ReviewTextTest, WatchShowsDatesFiltersByTypeAndSpeaksJson) {
  ok("start", {{"description", "watch"}});
  const std::string human = base + "/human.out", exact = base + "/json.out";
  const pid_t w1 = start_watch(human, {"--type", "refusal"});
  const pid_t w2 = start_watch(exact, {"--json", "--type", "refusal,grant"});
  // Refused until both watches have seen it (each subscribes once it runs).
  for (int i = 0; i < 600 && (slurp(human).find("refusal") == std::string::npos ||
                              slurp(exact).find("refusal") == std::string::npos);
       ++i) {
    run_sh("echo x > refused.txt; sleep 0.05", in_mnt);
  }
  ok("grant", {{"reason", "go"}});
  ok("turn");
  for (int i = 0; i < 500 && slurp(exact).find("\"grant\"") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop_watch(w1);
  stop_watch(w2);
  const std::string h = slurp(human);
  EXPECT_TRUE(std::regex_search(
      h,
      std::regex(
          R"((^|\n)\d{4}-\d\d-\d\d \d\d:\d\d:\d\d refusal +count=1 op=create path=refused\.txt)")))
      << h;
  std::istringstream lines(h);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_NE(line.find(" refusal "), std::string::npos) << "not a refusal: " << line;
  }
  std::istringstream jlines(slurp(exact));
  std::set<std::string> types;
  for (std::string line; std::getline(jlines, line);) {
    json e = json::parse(line, nullptr, false);
    ASSERT_TRUE(e.is_object()) << line;
    if (e.contains("type")) types.insert(e.value("type", ""));
  }
  EXPECT_EQ(types, (std::set<std::string>{"refusal", "grant"}));
}

TEST_F(ReviewTextTest, WatchSinceShowsTheAuditLogsEventsFirst) {
  ok("start", {{"description", "since"}});
  ASSERT_NE(run_sh("echo x > before.txt", in_mnt).exit_code, 0);
  ok("status");  // publishes the refusal; the audit log takes it off the bus
  const std::string audit = root + "/.longrun/audit.jsonl";
  for (int i = 0; i < 500 && slurp(audit).find("before.txt") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_NE(slurp(audit).find("before.txt"), std::string::npos);
  const std::string out = base + "/since.out";
  const pid_t w = start_watch(out, {"--since", "1h", "--type", "refusal"});
  for (int i = 0; i < 500 && slurp(out).find("before.txt") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop_watch(w);
  EXPECT_TRUE(std::regex_search(
      slurp(out),
      std::regex(R"(^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d refusal +count=1 op=create path=before\.txt)")))
      << slurp(out);
  RunResult bad = ctl({"watch", "--since", "yesterday-ish"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
}

}  // namespace
}  // namespace leasefs::test

// The leasectl binary against a real runtime: exit codes, output, roles.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "protocol/command_registry.hpp"
#include "tests/support/runtime_harness.hpp"

namespace leasefs::control::test {
namespace {

using nlohmann::json;

struct Outcome {
  int rc = -1;
  std::string out;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a shell command line; stdout (and stderr when asked) captured.
Outcome sh(const std::string& command, bool with_stderr = true) {
  Outcome r;
  std::string full = command + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = ::popen(full.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class LeasectlTest : public ::testing::Test {
 protected:
  Outcome ctl(const std::string& args, bool with_stderr = true) {
    return sh("env -u LEASEFS_SOCKET " + quote(LEASECTL_PATH) + " --socket " + quote(h.socket()) +
                  " " + args,
              with_stderr);
  }
  RuntimeHarness h;
};

// leasectl and the server read one registry: every protocol command is a
// subcommand, described by the registry's summary.
TEST_F(LeasectlTest, EveryRegistryCommandIsASubcommand) {
  for (const auto& spec : protocol::command_registry()) {
    std::string words;
    for (const auto& w : protocol::cli_words(spec.name)) words += " " + w;
    auto r = ctl(words + " --help");
    EXPECT_EQ(r.rc, 0) << spec.name << ": " << r.out;
    EXPECT_NE(r.out.find(std::string(spec.summary)), std::string::npos)
        << spec.name << ": " << r.out;
  }
}

TEST_F(LeasectlTest, ExitZeroOnSuccess) {
  auto r = ctl("start 'fix the fetcher timeout' --keyword fetcher --done-when 'tests pass'");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("in_progress"), std::string::npos) << r.out;
  r = ctl("status");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("fix the fetcher timeout"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\033["), std::string::npos) << "no colour when stdout is not a tty";
}

TEST_F(LeasectlTest, ExitOneWhenTheDaemonRefuses) {
  auto r = ctl("grant --reason 'no task yet'");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("error[no_task]:"), std::string::npos) << r.out;
}

TEST_F(LeasectlTest, ExitTwoOnUsageErrors) {
  EXPECT_EQ(ctl("").rc, 2);
  EXPECT_EQ(ctl("frobnicate").rc, 2);
  EXPECT_EQ(ctl("grant").rc, 2);  // --reason is required
  EXPECT_EQ(ctl("checkpoint --summary s").rc, 2);
  EXPECT_EQ(ctl("checkpoint --summary s --next n --status asleep").rc, 2);
  EXPECT_EQ(ctl("memory").rc, 2);
  EXPECT_EQ(ctl("--help").rc, 0);
}

TEST_F(LeasectlTest, BadValuesAreUsageErrorsCheckedBeforeSending) {
  ASSERT_EQ(ctl("start 'x'").rc, 0);
  auto r = ctl("grant --reason r --ttl 10x");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("--ttl"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'10x' is not a duration"), std::string::npos) << r.out;
  EXPECT_EQ(ctl("grant --reason r --ttl 0").rc, 2);
  EXPECT_EQ(ctl("grant --reason r --ttl -5m").rc, 2);
  r = ctl("grant --reason r --ops write,explode");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("unknown op class 'explode'"), std::string::npos) << r.out;
  EXPECT_EQ(ctl("grant --reason r --ops ,").rc, 2);
  // A bare number: seconds or minutes? Refused on the command line.
  r = ctl("grant --reason r --ttl 10");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("'10' has no unit: write 10s, 10m or 10h"), std::string::npos) << r.out;
  r = ctl("transition done");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("'done' is not a task status"), std::string::npos) << r.out;
  // Nothing reached the daemon.
  EXPECT_TRUE(h.ok("status")["grants"].empty());
  EXPECT_EQ(h.ok("status")["task"]["status"], "in_progress");
  // The same parsers accept what the daemon accepts.
  EXPECT_EQ(ctl("grant --reason r --ops 'write, create' --ttl 90s").rc, 0);
  EXPECT_EQ(ctl("grant --reason r --ttl 500ms").rc, 0);
  EXPECT_EQ(ctl("transition paused").rc, 0);
}

TEST_F(LeasectlTest, ExitThreeWhenNoDaemonAnswers) {
  std::string missing = h.tmp() + "/nobody.sock";
  auto r = sh(quote(LEASECTL_PATH) + " --socket " + quote(missing) + " status");
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(r.out.find(missing), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("leasefs mount ROOT"), std::string::npos) << r.out;
  // From the environment too; and from the cwd when it is in no mount.
  r = sh("cd / && LEASEFS_SOCKET=" + quote(missing) + " " + quote(LEASECTL_PATH) + " status");
  EXPECT_EQ(r.rc, 3) << r.out;
  r = sh("cd / && env -u LEASEFS_SOCKET " + quote(LEASECTL_PATH) + " status");
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(r.out.find("not inside a leasefs mount"), std::string::npos) << r.out;
}

TEST_F(LeasectlTest, SocketFromEnvironment) {
  auto r = sh("LEASEFS_SOCKET=" + quote(h.socket()) + " " + quote(LEASECTL_PATH) + " status");
  EXPECT_EQ(r.rc, 0) << r.out;
}

TEST_F(LeasectlTest, JsonPrintsTheReplyOnOneLine) {
  auto r = ctl("--json status", false);
  ASSERT_EQ(r.rc, 0) << r.out;
  ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  auto reply = json::parse(r.out);
  EXPECT_TRUE(reply["ok"]);
  EXPECT_TRUE(reply["result"].contains("turn"));
  r = ctl("--json grant --reason nope", false);
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(json::parse(r.out)["error"]["code"], "no_task");
}

TEST_F(LeasectlTest, TheWholeLoop) {
  ASSERT_EQ(ctl("start 'edit the parser'").rc, 0);
  auto req = ctl("--json request --reason 'touch parser.c' --path parser.c", false);
  ASSERT_EQ(req.rc, 0) << req.out;
  std::string rid = json::parse(req.out)["result"]["request"]["id"];
  EXPECT_EQ(ctl("approve " + rid + " --reason 'only parser.c'").rc, 0);
  EXPECT_EQ(ctl("reject " + rid).rc, 1);
  EXPECT_EQ(ctl("grant --reason 'docs too' --path 'docs/*' --ops write,create --ttl 10m").rc, 0);
  EXPECT_EQ(ctl("revoke").rc, 0);
  EXPECT_EQ(ctl("turn").rc, 0);
  EXPECT_EQ(ctl("end-turn").rc, 0);
  auto cp =
      ctl("checkpoint --summary 'parser half done' --next 'finish the lexer' "
          "--status paused --verified 'unit tests' --current-step lexer");
  EXPECT_EQ(cp.rc, 0) << cp.out;
  EXPECT_NE(cp.out.find("parser half done"), std::string::npos) << cp.out;
  EXPECT_EQ(ctl("resume").rc, 0);
  EXPECT_EQ(ctl("transition blocked --reason 'waiting on review'").rc, 0);
  EXPECT_EQ(
      ctl("memory save --title lexer --content 'the lexer is hand written' --keyword lexer").rc, 0);
  auto found = ctl("memory search lexer");
  EXPECT_EQ(found.rc, 0);
  EXPECT_NE(found.out.find("lexer"), std::string::npos);
  EXPECT_EQ(ctl("audit verify").rc, 0);
}

TEST_F(LeasectlTest, IdempotencyKeyFlag) {
  ASSERT_EQ(ctl("start 'x'").rc, 0);
  auto a = ctl("--json --idempotency-key k7 turn", false);
  auto b = ctl("--json --idempotency-key k7 turn", false);
  ASSERT_EQ(a.rc, 0);
  ASSERT_EQ(b.rc, 0);
  EXPECT_EQ(json::parse(a.out)["result"], json::parse(b.out)["result"]);
  EXPECT_EQ(h.ok("status")["turn"], 1);
}

TEST_F(LeasectlTest, UnprivilegedUserMayNotGrant) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  if (sh("command -v setpriv").rc != 0) GTEST_SKIP() << "setpriv missing";
  ASSERT_EQ(ctl("start 'x'").rc, 0);
  // Let uid 65534 reach the socket: traversable directories, a writable socket.
  ::chmod(h.tmp().c_str(), 0755);
  ::chmod(h.socket().c_str(), 0666);
  std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups " +
                          quote(LEASECTL_PATH) + " --socket " + quote(h.socket()) + " ";
  auto probe = sh(as_nobody + "status");
  if (probe.rc == 126 || probe.out.find("Permission denied") != std::string::npos) {
    GTEST_SKIP() << "leasectl is not executable by uid 65534 here: " << probe.out;
  }
  ASSERT_EQ(probe.rc, 0) << probe.out;
  auto r = sh(as_nobody + "grant --reason 'let me in'");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("error[forbidden]"), std::string::npos) << r.out;
  // The agent side may still ask.
  EXPECT_EQ(sh(as_nobody + "request --reason 'may I'").rc, 0);
  EXPECT_TRUE(h.ok("status")["grants"].empty());
}

TEST_F(LeasectlTest, WatchPrintsEventsUntilInterrupted) {
  std::string out_file = h.tmp() + "/watch.out";
  std::string cmd = "env -u LEASEFS_SOCKET " + quote(LEASECTL_PATH) + " --json --socket " +
                    quote(h.socket()) + " watch > " + quote(out_file) + " 2>&1 & echo $!";
  auto started = sh(cmd);
  int pid = std::stoi(started.out);
  // Wait for the watch to be established (the ack line).
  for (int i = 0; i < 100; ++i) {
    if (sh("test -s " + quote(out_file)).rc == 0) break;
    ::usleep(20'000);
  }
  h.start_task();
  for (int i = 0; i < 100; ++i) {
    if (sh("grep -q '\"type\":\"start\"' " + quote(out_file)).rc == 0) break;
    ::usleep(20'000);
  }
  ::kill(pid, SIGINT);
  for (int i = 0; i < 250 && ::kill(pid, 0) == 0; ++i) ::usleep(20'000);
  EXPECT_NE(::kill(pid, 0), 0) << "leasectl watch did not exit on SIGINT";
  auto out = sh("cat " + quote(out_file));
  EXPECT_NE(out.out.find("\"type\":\"start\""), std::string::npos) << out.out;
}

TEST(LeasectlHook, ClaudeCodeSettings) {
  // `hook` is the first spelling of `hooks`; both print the same settings.
  for (const char* spelling : {" hook claude-code", " hooks claude-code"}) {
    auto r = sh(quote(LEASECTL_PATH) + spelling, false);
    ASSERT_EQ(r.rc, 0);
    const std::string self = quote(LEASECTL_PATH);
    auto group = [](const std::string& command, int timeout) {
      return json::array(
          {{{"hooks",
             json::array({{{"type", "command"}, {"timeout", timeout}, {"command", command}}})}}});
    };
    const json expected = {{"hooks",
                            {{"UserPromptSubmit", group(self + " --hook turn || exit 2", 30)},
                             {"Stop", group(self + " --hook end-turn", 30)},
                             {"PreToolUse", group(self + " --hook refusals mark", 10)},
                             {"PostToolUse", group(self + " --hook refusals since", 10)},
                             {"PostToolUseFailure", group(self + " --hook refusals since", 10)}}}};
    EXPECT_EQ(json::parse(r.out), expected) << r.out;
  }
}

}  // namespace
}  // namespace leasefs::control::test

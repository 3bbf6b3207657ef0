// Attack class: forging the review. The agent, under a lease and from its own
// uid, gives files, a symlink target, a rename target and an xattr (its name
// and value) text built to start lines of their own in what the approver reads
// before undoing or approving: a `deleted file` line, a `renamed` line, the
// unified diff's ---/+++ headers, an xattr line, a refusal or a request, plus
// an escape sequence. `leasectl diff`, `diff --stat`, `status` and `watch` must
// show every such name quoted as git quotes it (core.quotePath), on the line it
// belongs to, and `--json` must keep the exact names.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/journal_fixture.hpp"
#include "tests/support/run.hpp"

namespace leasefs::test {
namespace {

// python3 bytes literals (the agent's shell makes the names through the mount).
const std::string kMakeNames = R"py(
import os
os.mkdir(b'x\ndeleted file src')
open(b'x\ndeleted file src/main.c', 'w').write('a\n')
os.mkdir(b'y\n+++ b')
open(b'y\n+++ b/forged', 'w').write('b\n')
open(b'\x1b[2Jclear', 'w').write('d\n')
os.symlink(b't\nrenamed a -> b', b'ln')
os.mkdir(b'z\n--- a')
os.rename(b'orig', b'z\n--- a/forged')
os.setxattr(b'keep', b'user.n\nxattr forged', b'v\n\x1b[2Jforged')
)py";

// What must never begin a line of what the approver reads.
const std::vector<std::string> kForged = {"deleted file src/main.c",
                                          "+++ b/forged",
                                          "--- a/forged",
                                          "renamed a -> b",
                                          "refused-name",
                                          "paths forged",
                                          "xattr forged"};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expect_inert_review(const std::string& what, const std::string& out) {
  for (const std::string bad : {"\x1b", "\xff", "\xfe"}) {
    EXPECT_EQ(out.find(bad), std::string::npos) << what << ":\n" << out;
  }
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    for (const auto& forged : kForged) {
      EXPECT_NE(line.rfind(forged, 0), 0u) << what << ": a name started a line:\n" << out;
    }
  }
}

class JournalInertReview : public JournalTest {
 protected:
  RunResult as_agent(const std::string& script) {
    return run_sh_as(kAgentUid, kAgentUid, script, root);
  }
  RunResult leasectl(std::vector<std::string> args) {
    args.insert(args.begin(), {LEASECTL_BIN, "--socket", sock});
    RunOptions o;
    o.timeout_s = 60;
    return run_argv(args, o);
  }
};

TEST_F(JournalInertReview, AgentNamesCannotForgeLinesOfTheReview) {
  ASSERT_EQ(run_sh("cd " + root +
                   " && echo o > orig && echo k > keep && chmod 666 orig keep && chmod 777 .")
                .exit_code,
            0);
  mount();
  const uint64_t t = leased_turn();
  const std::string script = base + "/names.py";
  std::ofstream(script) << kMakeNames;
  RunResult made = as_agent("python3 " + script);
  ASSERT_EQ(made.exit_code, 0) << made.output;

  RunResult d = leasectl({"diff", "--turn", std::to_string(t)});
  ASSERT_EQ(d.exit_code, 0) << d.output;
  expect_inert_review("diff", d.output);
  for (const std::string quoted :
       {"created file \"x\\ndeleted file src/main.c\" (mode", "+++ \"b/y\\n+++ b/forged\"",
        "\"\\033[2Jclear\"", "-> \"t\\nrenamed a -> b\"", "renamed orig -> \"z\\n--- a/forged\"",
        "xattr \"user.n\\nxattr forged\" of keep (none) -> \"v\\n\\033[2Jforged\""}) {
    EXPECT_NE(d.output.find(quoted), std::string::npos) << quoted << " in:\n" << d.output;
  }

  RunResult st = leasectl({"diff", "--stat", "--turn", std::to_string(t)});
  ASSERT_EQ(st.exit_code, 0) << st.output;
  expect_inert_review("diff --stat", st.output);
  EXPECT_NE(st.output.find("\"x\\ndeleted file src/main.c\""), std::string::npos) << st.output;

  // --json: the exact names.
  RunResult j = leasectl({"--json", "diff", "--turn", std::to_string(t)});
  ASSERT_EQ(j.exit_code, 0) << j.output;
  std::vector<std::string> paths;
  const nlohmann::json exact = nlohmann::json::parse(j.output);
  for (const auto& c : exact["result"]["changes"]) {
    paths.push_back(c.value("path", ""));
  }
  EXPECT_NE(std::find(paths.begin(), paths.end(), "x\ndeleted file src/main.c"), paths.end())
      << j.output;

  // A refusal and a request with such names, in status and watch.
  ok("turn");
  const std::string events = base + "/watch.out";
  const pid_t watch = ::fork();
  if (watch == 0) {
    const int fd = ::open(events.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ::dup2(fd, STDOUT_FILENO);
    ::execl(LEASECTL_BIN, LEASECTL_BIN, "--socket", sock.c_str(), "watch", nullptr);
    ::_exit(127);
  }
  ASSERT_GT(watch, 0);
  children.push_back(watch);
  // Refused until watch has seen it (it subscribes after it starts).
  for (int i = 0; i < 600 && slurp(events).find("refusal") == std::string::npos; ++i) {
    as_agent("printf x > 'w\nrefused-name'; sleep 0.1");
  }
  ::kill(watch, SIGINT);
  ::waitpid(watch, nullptr, 0);
  const std::string watched = slurp(events);
  expect_inert_review("watch", watched);
  EXPECT_NE(watched.find("path=\"w\\nrefused-name\""), std::string::npos) << watched;

  ::chmod(sock.c_str(), 0666);  // the agent asks; the daemon judges its uid
  RunResult asked = as_agent(std::string(LEASECTL_BIN) + " --socket " + sock +
                             " request --reason r --path \"$(printf 'p\\npaths forged')\"");
  ASSERT_EQ(asked.exit_code, 0) << asked.output;
  RunResult s = leasectl({"status"});
  ASSERT_EQ(s.exit_code, 0) << s.output;
  expect_inert_review("status", s.output);
  EXPECT_NE(s.output.find("\"w\\nrefused-name\""), std::string::npos) << s.output;
  EXPECT_NE(s.output.find("paths \"p\\npaths forged\""), std::string::npos) << s.output;
}

}  // namespace
}  // namespace leasefs::test

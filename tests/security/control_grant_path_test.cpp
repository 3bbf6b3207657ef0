// Attack class: a grant wider than the approver read. The agent asks for (and an
// approver, over the socket or with leasectl, grants) paths spelt to reach
// outside the root ("..", an absolute path elsewhere) or to look like glob
// syntax the matcher reads otherwise (braces, brackets, "***"). The daemon
// refuses each with a reason that names what is supported, issues no grant, and
// keeps the harmless spellings ("a//b", "./a", an absolute path under the root)
// in the one form the gate matches.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

struct Spelling {
  std::string path;
  std::string says;  // in the refusal
};

std::vector<Spelling> refused(const std::string& root) {
  return {{"../outside", "'..' is not allowed"},
          {"sub/../../x", "'..' is not allowed"},
          {"sub/..", "'..' is not allowed"},
          {root + "/../outside", "'..' is not allowed"},
          {"/etc/passwd", "is outside the root"},
          {root + "x/a.c", "is outside the root"},
          {"src/***", "'***' is not a glob"},
          {"{a,b}", "braces are not supported; grant each path with its own --path"},
          {"[abc", "brackets (character classes) are not supported"},
          {"./", "names the root itself"}};
}

TEST(ControlGrantPath, PathsOutsideTheRootOrInUnsupportedSyntaxAreNeverGranted) {
  ControlDaemon d;
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("start", {{"description", "grant paths"}}).value("ok", false));

  for (const Spelling& s : refused(d.root())) {
    json g = root.call("grant", {{"reason", "r"}, {"paths", json::array({s.path})}});
    EXPECT_FALSE(g.value("ok", true)) << s.path << ": " << g.dump();
    const json error = g.value("error", json::object());
    EXPECT_EQ(error.value("code", ""), "invalid_argument") << s.path << ": " << g.dump();
    EXPECT_NE(error.value("message", "").find(s.says), std::string::npos)
        << s.path << ": " << g.dump();

    // The agent's request, which an approval would turn into a grant as it is.
    const std::string line =
        json{{"id", 1}, {"cmd", "request"}, {"args", {{"reason", "r"}, {"paths", {s.path}}}}}
            .dump();
    const pid_t agent = spawn_agent([&] {
      json reply = json::parse(call_line(d.socket(), line, 10000), nullptr, false);
      return !reply.is_discarded() && reply.value("ok", true) == false &&
                     reply.value("error", json::object()).value("code", "") == "invalid_argument"
                 ? 0
                 : 1;
    });
    EXPECT_EQ(wait_child(agent, 30000), 0) << s.path;
  }
  json st = root.call("status");
  EXPECT_TRUE(st["result"]["grants"].empty()) << st.dump();
  EXPECT_TRUE(st["result"]["pending_requests"].empty()) << st.dump();

  // The person's view: leasectl says why, exit 1.
  RunResult braces =
      run_argv({LEASECTL_BIN, "--socket", d.socket(), "grant", "--reason", "r", "--path", "{a,b}"});
  EXPECT_EQ(braces.exit_code, 1) << braces.output;
  EXPECT_NE(braces.output.find("braces are not supported; grant each path with its own --path"),
            std::string::npos)
      << braces.output;
}

TEST(ControlGrantPath, HarmlessSpellingsAreGrantedInTheGatesForm) {
  ControlDaemon d;
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("start", {{"description", "grant paths"}}).value("ok", false));
  json g = root.call(
      "grant", {{"reason", "r"}, {"paths", {"a//b", "./a", "src/./x/", d.root() + "/src/y.c"}}});
  ASSERT_TRUE(g.value("ok", false)) << g.dump();
  EXPECT_EQ(g["result"]["grant"]["paths"], json({"a/b", "a", "src/x/", "src/y.c"})) << g.dump();
}

}  // namespace
}  // namespace leasefs::test

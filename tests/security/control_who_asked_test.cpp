// Attack class: asking for a lease in someone else's name, or hiding which
// program asks. Every request carries who asked, from the kernel (SO_PEERCRED
// uid and pid) and /proc/<pid>/cmdline (bounded), not from anything the agent
// sends; `leasectl status`, approve and reject show it next to what was asked,
// with the command line rendered inert, and `--json` keeps it exact.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

TEST(ControlWhoAsked, RequestsShowUidPidAndCommandInert) {
  ControlDaemon d;
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("start", {{"description", "who asked"}}).value("ok", false));

  // The agent's own leasectl, with an escape sequence and a forged line in argv.
  // ESC c (a terminal reset): a bracket would be refused as glob syntax.
  const std::string forged =
      "src/\x1b"
      "cx\nR_0009 by uid 0";
  RunOptions as_agent;
  as_agent.uid = kAgentUid;
  as_agent.gid = kAgentGid;
  RunResult asked = run_argv({LEASECTL_BIN, "--socket", d.socket(), "request", "--reason",
                              "need it", "--path", forged, "--path", "requester_uid=0"},
                             as_agent);
  ASSERT_EQ(asked.exit_code, 0) << asked.output;

  json st = root.call("status", json::object());
  ASSERT_EQ(st["result"]["pending_requests"].size(), 1u) << st.dump();
  const json& q = st["result"]["pending_requests"][0];
  EXPECT_EQ(q["requester_uid"], kAgentUid);
  EXPECT_GT(q.value("requester_pid", 0), 0);
  const std::string command = q.value("requester_command", "");
  EXPECT_NE(command.find("leasectl --socket"), std::string::npos) << command;
  EXPECT_NE(command.find(forged), std::string::npos) << command;

  RunResult human = run_argv({LEASECTL_BIN, "--socket", d.socket(), "status"});
  ASSERT_EQ(human.exit_code, 0) << human.output;
  EXPECT_EQ(human.output.find('\x1b'), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("by uid 65534 pid " + std::to_string(q["requester_pid"].get<int>())),
            std::string::npos)
      << human.output;
  EXPECT_NE(human.output.find("\\x1bcx\\nR_0009"), std::string::npos) << human.output;
  EXPECT_EQ(human.output.find("\nR_0009"), std::string::npos) << human.output;

  RunResult approve = run_argv({LEASECTL_BIN, "--socket", d.socket(), "approve", "R_0001"});
  ASSERT_EQ(approve.exit_code, 0) << approve.output;
  EXPECT_NE(approve.output.find("asked by uid 65534 pid"), std::string::npos) << approve.output;
  EXPECT_EQ(approve.output.find('\x1b'), std::string::npos) << approve.output;
}

}  // namespace
}  // namespace leasefs::test

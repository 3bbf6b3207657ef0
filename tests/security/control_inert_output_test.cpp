// Attack class: misleading the approver through the terminal. The agent asks
// for a lease with a reason built to rewrite what a person sees: escape
// sequences (clear screen, recolour), the C1 CSI, a right-to-left override, a
// zero-width space, and a newline followed by a forged line. `leasectl status`
// must show all of it as inert escapes, on the request's own line; `--json`
// must keep the exact text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

const std::string kReason =
    "fix typo\x1b[2J\x1b[1;32m\xc2\x9b"
    "31m\xe2\x80\xae"
    "gnp.exe\xe2\x80\x8b\nR_0002  pending  turn 0  paths *  \"approved by the lead\"";

TEST(ControlInertOutput, AgentTextIsShownInertAndJsonKeepsItExact) {
  ControlDaemon d;
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("start", {{"description", "inert"}}).value("ok", false));
  pid_t agent = spawn_agent([&] {
    ControlClient c(d.socket());
    return c.call("request", {{"reason", kReason}, {"paths", {"src/\x1bP0;owned\x1b\\*.c"}}})
                   .value("ok", false)
               ? 0
               : 1;
  });
  ASSERT_EQ(wait_child(agent, 10'000), 0);

  RunResult human = run_argv({LEASECTL_BIN, "--socket", d.socket(), "status"});
  ASSERT_EQ(human.exit_code, 0) << human.output;
  for (const std::string bad : {"\x1b", "\xc2\x9b", "\xe2\x80\xae", "\xe2\x80\x8b", "\x07"}) {
    EXPECT_EQ(human.output.find(bad), std::string::npos) << human.output;
  }
  // The forged line is not a line: only R_0001 begins a request line.
  std::istringstream lines(human.output);
  int request_lines = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("R_000") != std::string::npos && line.find("  R_000") == 0) ++request_lines;
    EXPECT_NE(line.rfind("R_0002", 0), 0u) << human.output;
  }
  EXPECT_EQ(request_lines, 1) << human.output;
  EXPECT_NE(human.output.find("\\x1b[2J"), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("\\u{202e}"), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("\\nR_0002"), std::string::npos) << human.output;

  RunResult exact = run_argv({LEASECTL_BIN, "--socket", d.socket(), "--json", "status"});
  ASSERT_EQ(exact.exit_code, 0) << exact.output;
  json j = json::parse(exact.output);
  EXPECT_EQ(j["result"]["pending_requests"][0]["reason"], kReason);
}

}  // namespace
}  // namespace leasefs::test

// What a new user meets on a fresh clone, each one fixed and kept fixed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "tests/support/agentuser_daemons.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using json = nlohmann::json;

class PapercutTest : public AgentUserTest {
 protected:
  void mount() {
    ::mkdir(root.c_str(), 0755);
    ::mkdir(mnt.c_str(), 0755);
    RunResult r = leasefs({"mount", root, mnt, "--socket", sock}, mnt, root);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  RunResult ctl(const std::string& args) {
    RunOptions o;
    o.cwd = mnt;
    return run_sh(q(LEASECTL_PATH) + " " + args, o);
  }
  std::string root, mnt, sock;
  void SetUp() override {
    AgentUserTest::SetUp();
    root = base + "/root";
    mnt = base + "/mnt";
    sock = base + "/ctl.sock";
  }
};

TEST_F(PapercutTest, MistypedCommandNamesTheWordAndTheClosest) {
  RunResult r = run_argv({LEASECTL_PATH, "--json", "stauts"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command 'stauts'; did you mean 'status'?"), std::string::npos)
      << r.output;
  r = run_argv({LEASEFS_BIN, "mout", "/tmp"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command 'mout'; did you mean 'mount'?"), std::string::npos)
      << r.output;
  r = run_argv({LEASECTL_PATH, "frobnicate"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command 'frobnicate'\n"), std::string::npos) << r.output;
}

TEST_F(PapercutTest, DemoHelpPrintsHelpAndRunsNothing) {
  RunResult r = run_argv({LEASEFS_BIN, "demo", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Usage: leasefs demo"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("=="), std::string::npos) << r.output;  // no demo section ran
}

TEST_F(PapercutTest, RefusalsAreCountedInFullAndClearedForANewTask) {
  mount();
  ControlClient c(sock);
  ASSERT_TRUE(c.call("start", {{"description", "first"}}).value("ok", false));
  RunOptions in_mnt;
  in_mnt.cwd = mnt;
  for (int i = 0; i < 12; ++i) run_sh("echo x > f" + std::to_string(i) + ".txt", in_mnt);
  json s;
  for (int i = 0; i < 200; ++i) {  // refusals reach the service off the hot path
    s = c.call("status")["result"];
    if (s.value("refusals_total", 0) >= 12) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(s["refusals_total"], 12) << s.dump();
  RunResult status = ctl("status");
  EXPECT_NE(status.output.find("refusals   12 (the last 10:)"), std::string::npos) << status.output;

  ASSERT_TRUE(
      c.call("transition", {{"state", "completed"}, {"reason", "done"}}).value("ok", false));
  ASSERT_TRUE(c.call("start", {{"description", "second"}}).value("ok", false));
  s = c.call("status")["result"];
  EXPECT_TRUE(s["recent_refusals"].empty()) << s.dump();
  EXPECT_EQ(s["refusals_total"], 0);
}

TEST_F(PapercutTest, ResumeSaysResumedAndNamesAnUnknownTask) {
  mount();
  ASSERT_EQ(ctl("start 'resume me'").exit_code, 0);
  ASSERT_EQ(ctl("checkpoint --summary s --next n").exit_code, 0);
  RunResult r = ctl("resume");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("Resume with"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Resumed: writes stay closed"), std::string::npos) << r.output;

  r = ctl("resume T_nope");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no task T_nope to resume"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("checkpoint it before"), std::string::npos) << r.output;
}

TEST_F(PapercutTest, UnmountByRootInMirrorMode) {
  mount();
  // The advice a second daemon gets names the root; it must work.
  ::mkdir((base + "/mnt2").c_str(), 0755);
  RunResult again =
      run_argv({LEASEFS_BIN, "mount", root, base + "/mnt2", "--socket", base + "/x.sock"});
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_NE(again.output.find("leasefs unmount " + root), std::string::npos) << again.output;
  RunResult r = run_argv({LEASEFS_BIN, "unmount", root});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(base::leasefs_mount_at(mnt));
}

}  // namespace
}  // namespace leasefs::test

// `leasefs mount ROOT --agent USER` on a real git repository, as the README
// recommends: git's objects are 0444, so the agent's own files are never a reason
// to refuse; a file the agent does not own is warned about, and the mount goes on;
// after the agent's own commit the next mount, and a restart over a dead mount
// after a crash, mount again.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "fuse/takeover.hpp"
#include "tests/support/agentuser_daemons.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

class AgentGitRepoTest : public AgentUserTest {
 protected:
  void SetUp() override {
    AgentUserTest::SetUp();
    root = base + "/proj";
    sock = base + "/ctl.sock";
  }
  RunResult mount() {
    return leasefs({"mount", root, "--agent", agent, "--socket", sock}, root, root);
  }
  static bool wait_dead(const std::string& path) {
    for (int i = 0; i < 500; ++i) {
      if (fuse::dead_leasefs_mount(path)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  std::string root, sock, agent;
};

TEST_F(AgentGitRepoTest, GitRepositoryMountsBeforeAndAfterTheAgentsCommitAndWarnsOfOthersFiles) {
  const auto [uid, gid] = add_user("lfsgit");
  agent = users.back();
  ::mkdir(root.c_str(), 0755);
  RunOptions in_root;
  in_root.cwd = root;
  RunResult made = run_sh(
      "git init -q . && mkdir src && printf 'timeout = 10\\n' > src/pay.cfg && git add -A && "
      "git -c user.name=p -c user.email=p@x commit -qm first",
      in_root);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  ASSERT_EQ(run_argv({"chown", "-R", agent + ":", root}).exit_code, 0);

  // Git's objects are the agent's and read-only: not a reason to refuse, nor to warn.
  RunResult r = mount();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  ASSERT_TRUE(base::leasefs_mount_at(root));

  // The agent commits under a lease, as itself; git's new objects are 0444 and its own.
  {
    ControlClient c(sock);
    ASSERT_TRUE(c.call("start", {{"description", "commit"}}).value("ok", false));
    ASSERT_TRUE(c.call("grant", {{"reason", "commit"}}).value("ok", false));
  }
  RunResult commit =
      as_user(uid, gid,
              "export HOME=/nonexistent; printf 'timeout = 30\\n' > src/pay.cfg && git add -A && "
              "git -c user.name=a -c user.email=a@x commit -qm second && "
              "git log --oneline | wc -l",
              root);
  ASSERT_EQ(commit.exit_code, 0) << commit.output;
  EXPECT_NE(commit.output.find("2"), std::string::npos) << commit.output;
  r = leasefs({"unmount", root}, root, root);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // A file the agent does not own: the person's choice. Named in a warning; mounted.
  std::ofstream(root + "/secret.key") << "k\n";
  ::chmod((root + "/secret.key").c_str(), 0600);
  r = mount();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(base::leasefs_mount_at(root));
  EXPECT_NE(r.output.find("warning: --agent " + agent), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cannot write 1 of"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(root + "/secret.key (owner root, mode 0600)"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find(".git/objects"), std::string::npos) << r.output;

  // The daemon dies; the restart mounts on top of the dead mount, as systemd's would.
  const pid_t pid = read_lock_pid(root + "/.longrun/lock");
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGKILL);
  ASSERT_TRUE(wait_dead(root));
  r = mount();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fuse::dead_leasefs_mount(root));
  EXPECT_NE(r.output.find(root + "/secret.key (owner root, mode 0600)"), std::string::npos)
      << r.output;
  r = leasefs({"unmount", root}, root, root);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace leasefs::test

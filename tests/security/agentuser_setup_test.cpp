// `leasefs mount ROOT --agent USER`, end to end, with USER a real user made for the
// test: one setup command; USER reads status.md, finds the daemon from anywhere in
// the tree, asks for a lease and is refused a grant; the rest of .longrun stays
// unreadable to it, and nobody else reaches the socket.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol/socket_path.hpp"
#include "tests/support/agentuser_daemons.hpp"

namespace leasefs::test {
namespace {

TEST_F(AgentUserTest, AgentSetupInOneCommand) {
  const auto [uid, gid] = add_user("lfsagent");
  ASSERT_FALSE(users.empty());
  const std::string agent = users.back();
  const std::string root = base + "/root";
  ::mkdir(root.c_str(), 0755);
  ::mkdir((root + "/src").c_str(), 0755);
  std::ofstream(root + "/src/a.txt") << "timeout = 10\n";

  // The tree is root's: a lease could not let the agent write it. Said, with the fix;
  // mounted all the same (the person's choice).
  RunResult r = leasefs({"mount", root, "--agent", agent}, root, root);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cannot write 3 of 3 entries"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("chown -R " + agent + ": " + root), std::string::npos) << r.output;
  EXPECT_TRUE(base::leasefs_mount_at(root));
  r = leasefs({"unmount", root}, root, root);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  ASSERT_EQ(run_argv({"chown", "-R", agent + ":", root}).exit_code, 0);
  r = leasefs({"mount", root, "--agent", agent}, root, root);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(base::leasefs_mount_at(root));
  const std::string sock = protocol::default_socket_path(root);

  // The agent reads how to ask, and nothing else in .longrun.
  const std::string src = root + "/src";
  RunResult status_md = as_user(uid, gid, "cat ../.longrun/status.md", src);
  EXPECT_EQ(status_md.exit_code, 0) << status_md.output;
  EXPECT_NE(status_md.output.find("leasectl request"), std::string::npos) << status_md.output;
  RunResult list = as_user(uid, gid, "ls ../.longrun", src);
  EXPECT_NE(list.exit_code, 0) << list.output;
  RunResult scribble =
      as_user(uid, gid, "echo '## do what you like' >> ../.longrun/status.md", src);
  EXPECT_NE(scribble.exit_code, 0) << scribble.output;

  // From a subdirectory, leasectl finds the daemon and trusts it.
  RunResult status = as_user(uid, gid, q(LEASECTL_PATH) + " status", src);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  RunResult person = run_argv({LEASECTL_PATH, "--socket", sock, "start", "edit a.txt"});
  ASSERT_EQ(person.exit_code, 0) << person.output;

  // With a task, every file of .longrun exists; only status.md is the agent's.
  for (const char* name : {"state.json", "memory.db", "audit.jsonl", "lock"}) {
    RunResult peek = as_user(uid, gid, std::string("cat ../.longrun/") + name, src);
    EXPECT_NE(peek.exit_code, 0) << name << ": " << peek.output;
    EXPECT_NE(peek.output.find("Permission denied"), std::string::npos) << name << peek.output;
  }
  RunResult write = as_user(uid, gid, "echo 'timeout = 30' > a.txt", src);
  EXPECT_NE(write.exit_code, 0) << write.output;
  RunResult ask = as_user(
      uid, gid, q(LEASECTL_PATH) + " request --reason 'raise the timeout' --path src/a.txt", src);
  EXPECT_EQ(ask.exit_code, 0) << ask.output;
  EXPECT_NE(ask.output.find("R_0001"), std::string::npos) << ask.output;
  RunResult self_grant =
      as_user(uid, gid, q(LEASECTL_PATH) + " grant --reason 'I approve myself'", src);
  EXPECT_EQ(self_grant.exit_code, 1) << self_grant.output;
  EXPECT_NE(self_grant.output.find("error[forbidden]"), std::string::npos) << self_grant.output;

  // The person approves; the agent writes, and the file stays the agent's.
  RunOptions in_root;
  in_root.cwd = root;
  person = run_argv({LEASECTL_PATH, "approve", "R_0001", "--reason", "yes"}, in_root);
  ASSERT_EQ(person.exit_code, 0) << person.output;
  write = as_user(uid, gid, "echo 'timeout = 30' > a.txt && cat a.txt", src);
  EXPECT_EQ(write.exit_code, 0) << write.output;
  struct stat st {};
  ASSERT_EQ(::stat((src + "/a.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, uid);

  // Anyone else: no socket, no status.
  RunResult other =
      as_user(65534, 65534, q(LEASECTL_PATH) + " --socket " + q(sock) + " status", base);
  EXPECT_EQ(other.exit_code, 3) << other.output;
  EXPECT_NE(other.output.find("Permission denied"), std::string::npos) << other.output;
  other = as_user(65534, 65534, "cat " + q(root + "/.longrun/status.md"), base);
  EXPECT_NE(other.exit_code, 0) << other.output;

  r = leasefs({"unmount", root}, root, root);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// Approvers other than root reach the agent's socket too (an ACL entry each); others
// still do not.
TEST_F(AgentUserTest, AgentSetupLetsConfiguredApproversIn) {
  const auto [uid, gid] = add_user("lfsagent");
  const std::string agent = users.back();
  const auto [approver_uid, approver_gid] = add_user("lfsappr");
  const std::string root = base + "/root", sock = base + "/ctl.sock";
  ::mkdir(root.c_str(), 0755);
  ASSERT_EQ(::chown(root.c_str(), uid, gid), 0);
  RunResult r = leasefs({"mount", root, "--agent", agent, "--socket", sock, "--approver-uid",
                         std::to_string(approver_uid)},
                        root, root);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(run_argv({LEASECTL_PATH, "--socket", sock, "start", "approvers"}).exit_code, 0);

  RunResult grant =
      as_user(approver_uid, approver_gid,
              q(LEASECTL_PATH) + " --socket " + q(sock) + " grant --reason yes", base);
  EXPECT_EQ(grant.exit_code, 0) << grant.output;
  RunResult agent_status =
      as_user(uid, gid, q(LEASECTL_PATH) + " --socket " + q(sock) + " status", base);
  EXPECT_EQ(agent_status.exit_code, 0) << agent_status.output;
  RunResult other =
      as_user(65534, 65534, q(LEASECTL_PATH) + " --socket " + q(sock) + " status", base);
  EXPECT_EQ(other.exit_code, 3) << other.output;
}

// A group shared with someone else would hand them the socket: refused, with the fix.
TEST_F(AgentUserTest, AgentWhoseGroupIsSharedIsRefused) {
  const auto [uid, gid] = add_user("lfsagent");
  const std::string agent = users.back();
  const std::string other = "lfsother" + std::to_string(::getpid() % 100000);
  run_argv({"userdel", "-f", other});
  ASSERT_EQ(run_argv({"useradd", "--no-create-home", "--home-dir", "/nonexistent", "--gid",
                      std::to_string(gid), other})
                .exit_code,
            0);
  users.push_back(other);
  const std::string root = base + "/root";
  ::mkdir(root.c_str(), 0755);
  ASSERT_EQ(::chown(root.c_str(), uid, gid), 0);
  RunResult r =
      leasefs({"mount", root, "--agent", agent, "--socket", base + "/ctl.sock"}, root, root);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(other + " is in too"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("usermod -g " + agent + "-agent " + agent), std::string::npos)
      << r.output;
  EXPECT_FALSE(base::leasefs_mount_at(root));
}

}  // namespace
}  // namespace leasefs::test

// `leasefs forget ROOT` runs as root on a tree that is not mounted, which the agent
// (its owner) may have changed at will meanwhile. Whatever it put in place of
// .longrun, forget removes nothing but leasefs's own files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/agentuser_daemons.hpp"

namespace leasefs::test {
namespace {

namespace stdfs = std::filesystem;

class ForgetAttack : public AgentUserTest {
 protected:
  void SetUp() override {
    AgentUserTest::SetUp();
    std::tie(uid, gid) = add_user("lfsforget");
    root = base + "/root";
    victim = base + "/victim";  // root's files the agent would like gone
    ::mkdir(root.c_str(), 0755);
    ::mkdir(victim.c_str(), 0700);
    std::ofstream(victim + "/journal") << "keep\n";
    std::ofstream(victim + "/audit.jsonl") << "keep\n";
    ASSERT_EQ(::chown(root.c_str(), uid, gid), 0);
  }
  RunResult forget(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"forget", root};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_binary(LEASEFS_BIN, args, 30);
  }
  uid_t uid = 0;
  gid_t gid = 0;
  std::string root, victim;
};

TEST_F(ForgetAttack, ALinkInPlaceOfLongrunIsNotFollowed) {
  RunResult r = as_user(uid, gid, "ln -s " + q(victim) + " .longrun", root);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const auto& extra : {std::vector<std::string>{}, std::vector<std::string>{"--all"}}) {
    r = forget(extra);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("nothing removed"), std::string::npos) << r.output;
    EXPECT_TRUE(stdfs::exists(victim + "/journal"));
    EXPECT_TRUE(stdfs::exists(victim + "/audit.jsonl"));
  }
}

TEST_F(ForgetAttack, ALongrunTheAgentMadeIsNotLeasefssToRemove) {
  RunResult r = as_user(uid, gid,
                        "mkdir .longrun && ln -s " + q(victim) +
                            " .longrun/journal && echo x > "
                            ".longrun/audit.jsonl",
                        root);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = forget({"--all"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("not root"), std::string::npos) << r.output;
  EXPECT_TRUE(stdfs::exists(root + "/.longrun/audit.jsonl"));
  EXPECT_TRUE(stdfs::exists(victim + "/journal"));
}

// Inside a .longrun of root's, a link the agent could not have made (the directory
// is root's, 0700) is still only a name: removed, never followed.
TEST_F(ForgetAttack, ALinkInsideLongrunIsRemovedNotFollowed) {
  ASSERT_EQ(::mkdir((root + "/.longrun").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((root + "/.longrun/journal").c_str(), 0700), 0);
  ASSERT_EQ(::symlink(victim.c_str(), (root + "/.longrun/journal/0").c_str()), 0);
  ASSERT_EQ(::symlink(victim.c_str(), (root + "/.longrun/reserve").c_str()), 0);
  RunResult r = forget({"--all"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(stdfs::exists(stdfs::symlink_status(root + "/.longrun")));
  EXPECT_TRUE(stdfs::exists(victim + "/journal"));
  EXPECT_TRUE(stdfs::exists(victim + "/audit.jsonl"));
}

}  // namespace
}  // namespace leasefs::test

// What a new user tripped on following the README, each run as a person does:
// the real leasectl and leasefs against a real mounted daemon.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "tests/support/agentuser_daemons.hpp"

namespace leasefs::test {
namespace {

namespace stdfs = std::filesystem;

class TripwireTest : public AgentUserTest {
 protected:
  void SetUp() override {
    AgentUserTest::SetUp();
    root = base + "/root";
    mnt = base + "/mnt";
    sock = base + "/ctl.sock";
    ::mkdir(root.c_str(), 0755);
    ::mkdir(mnt.c_str(), 0755);
  }
  void mount() {
    RunResult r = leasefs({"mount", root, mnt, "--socket", sock}, mnt, root);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  // `leasectl ARGS` (a shell line) run in `cwd` (default: the mount), the socket
  // found from there as a person's would be.
  RunResult ctl(const std::string& args, const std::string& cwd = "") {
    RunOptions o;
    o.cwd = cwd.empty() ? mnt : cwd;
    return run_sh("env -u LEASEFS_SOCKET " + q(LEASECTL_PATH) + " " + args, o);
  }
  // The line of `text` holding `needle`, or "".
  static std::string line_with(const std::string& text, const std::string& needle) {
    const size_t at = text.find(needle);
    if (at == std::string::npos) return "";
    const size_t begin = text.rfind('\n', at);
    const size_t end = text.find('\n', at);
    return text.substr(begin == std::string::npos ? 0 : begin + 1,
                       end == std::string::npos
                           ? std::string::npos
                           : end - (begin == std::string::npos ? 0 : begin + 1));
  }
  std::string root, mnt, sock;
};

// After unmount, `.longrun/` holds the journal and a 16 MiB ballast besides the
// record. `leasefs forget` removes the first two and says what it kept.
TEST_F(TripwireTest, ForgetAfterUnmountRemovesTheJournalAndTheReserveAndKeepsTheRecord) {
  ASSERT_EQ(run_sh("echo one > " + q(root + "/a")).exit_code, 0);
  mount();
  ASSERT_EQ(ctl("start forget").exit_code, 0);
  ASSERT_EQ(ctl("grant --reason edit").exit_code, 0);
  ASSERT_EQ(run_sh("echo two >> " + q(mnt + "/a")).exit_code, 0);
  ASSERT_EQ(ctl("turn").exit_code, 0);
  RunResult r = run_binary(LEASEFS_BIN, {"forget", root}, 30);
  EXPECT_EQ(r.exit_code, 1) << r.output;  // still served
  EXPECT_NE(r.output.find("leasefs unmount"), std::string::npos) << r.output;
  EXPECT_TRUE(stdfs::exists(root + "/.longrun/reserve"));
  ASSERT_EQ(run_binary(LEASEFS_BIN, {"unmount", mnt}, 30).exit_code, 0);

  r = run_binary(LEASEFS_BIN, {"forget", root, "--dry-run"}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(line_with(r.output, "reserve").find("would remove"), std::string::npos) << r.output;
  EXPECT_TRUE(stdfs::exists(root + "/.longrun/reserve"));
  r = run_binary(LEASEFS_BIN, {"forget", root}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(line_with(r.output, "journal").find("no turn can be undone"), std::string::npos)
      << r.output;
  EXPECT_NE(line_with(r.output, "kept").find("audit.jsonl"), std::string::npos) << r.output;
  EXPECT_FALSE(stdfs::exists(root + "/.longrun/reserve"));
  EXPECT_FALSE(stdfs::exists(root + "/.longrun/journal"));
  EXPECT_EQ(read_text(root + "/a"), "one\ntwo\n");

  // The record is whole: the next daemon takes it up and its chain verifies.
  mount();
  r = ctl("audit verify");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(ctl("status").output.find("forget"), std::string::npos);
  ASSERT_EQ(run_binary(LEASEFS_BIN, {"unmount", mnt}, 30).exit_code, 0);

  r = run_binary(LEASEFS_BIN, {"forget", root, "--all"}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(stdfs::exists(root + "/.longrun"));
  EXPECT_EQ(read_text(root + "/a"), "one\ntwo\n");
  r = run_binary(LEASEFS_BIN, {"forget", root}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("nothing to forget"), std::string::npos) << r.output;
}

TEST_F(TripwireTest, HooksWithoutAHostNamesTheHostsItSupports) {
  RunResult r = ctl("hooks", base);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("claude-code"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("codex"), std::string::npos) << r.output;
}

TEST_F(TripwireTest, DashCRunsAsIfStartedInThatDirectory) {
  mount();
  ASSERT_EQ(ctl("start 'dash C'").exit_code, 0);
  RunResult r = ctl("-C " + q(mnt) + " status", base);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dash C"), std::string::npos) << r.output;
  r = ctl("-C mnt status", base);  // relative to where leasectl starts
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // DIR is only a name to find the daemon for, as the current directory is.
  r = ctl("-C " + q(base + "/nowhere") + " status", base);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find(base + "/nowhere"), std::string::npos) << r.output;
}

TEST_F(TripwireTest, RevokeAllRevokesEveryGrantAndLedgersEachOne) {
  mount();
  ASSERT_EQ(ctl("start 'revoke all'").exit_code, 0);
  ASSERT_EQ(ctl("grant --reason one --path a.txt").exit_code, 0);
  ASSERT_EQ(ctl("grant --reason two --path b.txt").exit_code, 0);
  RunResult r = ctl("revoke --all");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("revoked 2 grant(s)"), std::string::npos) << r.output;
  r = ctl("--json grants");
  EXPECT_EQ(r.output, "[]\n");
  RunResult ledger =
      run_sh("sqlite3 -readonly " + q(root + "/.longrun/memory.db") +
             " \"SELECT subject_id FROM ledger WHERE kind = 'revoke' ORDER BY seq\"");
  EXPECT_EQ(ledger.output, "G_0001\nG_0002\n");
  r = ctl("revoke --all G_0001");  // the daemon refuses it, whoever sends it
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("give one or the other"), std::string::npos) << r.output;
}

TEST_F(TripwireTest, MountHelpNamesTypesDefaultsAndEveryLogLevel) {
  RunResult r = run_argv({LEASEFS_BIN, "mount", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("UINT"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("TEXT:"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("1099511627776"), std::string::npos) << r.output;
  EXPECT_NE(line_with(r.output, "--ask").find("DURATION"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[default: 60s]"), std::string::npos) << r.output;
  EXPECT_NE(line_with(r.output, "--journal-max-file-mb").find("MiB"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("trace, debug, info, warn, error, critical, off"), std::string::npos)
      << r.output;
}

TEST_F(TripwireTest, DryRunOfTheCurrentTurnWarnsAsTheUndoDoes) {
  mount();
  ASSERT_EQ(ctl("start 'undo now'").exit_code, 0);
  ASSERT_EQ(ctl("turn").exit_code, 0);
  ASSERT_EQ(ctl("grant --reason w --path a.txt").exit_code, 0);
  RunOptions o;
  o.cwd = mnt;
  ASSERT_EQ(run_sh("echo hi > a.txt", o).exit_code, 0);
  RunResult dry = ctl("undo --turn 1 --dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  RunResult real = ctl("undo --turn 1");
  ASSERT_EQ(real.exit_code, 0) << real.output;
  const std::string warning = line_with(real.output, "cannot be undone");
  ASSERT_FALSE(warning.empty()) << real.output;
  EXPECT_EQ(line_with(dry.output, "cannot be undone"), warning) << dry.output;
}

TEST_F(TripwireTest, ATurnThatHasNotBegunIsOneMessageForDiffAndUndo) {
  mount();
  ASSERT_EQ(ctl("start 'not begun'").exit_code, 0);
  RunResult diff = ctl("diff --turn 7");
  RunResult undo = ctl("undo --turn 7");
  EXPECT_EQ(diff.exit_code, 1) << diff.output;
  EXPECT_EQ(undo.exit_code, 1) << undo.output;
  EXPECT_NE(diff.output.find("turn 7 has not begun"), std::string::npos) << diff.output;
  EXPECT_EQ(diff.output, undo.output);
}

// A root inside a mounted root: said at once, and nothing is made or filed in
// the outer daemon (it used to say "cannot create .longrun: Permission denied",
// and in ask mode to file a request there).
TEST_F(TripwireTest, ARootInsideAMountedRootIsRefusedAndFilesNothing) {
  RunResult r = leasefs({"mount", root, mnt, "--socket", sock, "--ask=5"}, mnt, root);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(ctl("start 'nested'").exit_code, 0);
  ASSERT_EQ(run_sh("mkdir " + q(root + "/sub")).exit_code, 0);
  r = run_binary(LEASEFS_BIN, {"mount", mnt + "/sub", "--socket", base + "/inner.sock"}, 60);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("roots cannot nest"), std::string::npos) << r.output;
  struct stat st {};
  EXPECT_NE(::stat((root + "/sub/.longrun").c_str(), &st), 0) << "a .longrun was made";
  RunResult pending = ctl("--json status");
  EXPECT_NE(pending.output.find("\"pending_requests\":[]"), std::string::npos) << pending.output;
}

// A one-file grant lets tools write a temporary beside the file: `grants` and
// `grant` say so, and say nothing of it for a grant without paths or writes.
TEST_F(TripwireTest, GrantsSayWhatAOneFileGrantAllowsBesideTheFile) {
  mount();
  ASSERT_EQ(ctl("start 'beside'").exit_code, 0);
  RunResult g = ctl("grant --reason edit --path src/a.c");
  EXPECT_EQ(g.exit_code, 0) << g.output;
  EXPECT_NE(g.output.find("beside these paths, temporary files"), std::string::npos) << g.output;
  ASSERT_EQ(ctl("grant --reason names --path src/b.c --ops create").exit_code, 0);
  RunResult list = ctl("grants");
  EXPECT_EQ(list.exit_code, 0) << list.output;
  const size_t first = list.output.find("beside these paths");
  EXPECT_NE(first, std::string::npos) << list.output;
  EXPECT_EQ(list.output.find("beside these paths", first + 1), std::string::npos)
      << "said for the create-only grant too: " << list.output;
}

// `--approver-uid` without `--agent`: the approver it names reaches the socket
// (an ACL entry, as with --agent) and grants; a uid it does not name still
// cannot connect. Before, the socket stayed root's alone and the named approver
// was told only "permission denied".
TEST_F(TripwireTest, AnApproverNamedWithoutAnAgentReachesTheSocket) {
  const auto [approver_uid, approver_gid] = add_user("lfftappr");
  const auto [other_uid, other_gid] = add_user("lfftothr");
  RunResult r = leasefs(
      {"mount", root, mnt, "--socket", sock, "--approver-uid", std::to_string(approver_uid)}, mnt,
      root);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(ctl("--socket " + q(sock) + " start approvers").exit_code, 0);
  const std::string leasectl = q(LEASECTL_PATH) + " --socket " + q(sock);
  RunResult grant =
      as_user(approver_uid, approver_gid, leasectl + " grant --reason by-the-approver", base);
  EXPECT_EQ(grant.exit_code, 0) << grant.output;
  RunResult other = as_user(other_uid, other_gid, leasectl + " status", base);
  EXPECT_NE(other.exit_code, 0) << other.output;
  EXPECT_EQ(run_sh("echo granted > " + q(mnt + "/by-approver")).exit_code, 0);
}

}  // namespace
}  // namespace leasefs::test

// The daemon dies (base/failpoint.hpp: _exit, no cleanup) at each step of
// journaling and of undo; a new daemon takes the mount over, and the tree still
// comes back to what it was before the turn.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include "tests/support/journal_fixture.hpp"

namespace leasefs::test {
namespace {

class JournalCrash : public JournalTest, public ::testing::WithParamInterface<const char*> {
 protected:
  // Mounts with the failpoint armed in the daemon only.
  void mount_armed(const char* failpoint) {
    ::setenv("LEASEFS_FAILPOINT", failpoint, 1);
    mount();
    ::unsetenv("LEASEFS_FAILPOINT");
  }
  void wait_dead_and_remount() {
    ASSERT_TRUE(wait_until([&] { return fuse::dead_leasefs_mount(root); }))
        << "the daemon did not die at " << GetParam();
    auto r = leasefs({"mount", root, "--socket", sock});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  // Sends a command the daemon may die answering.
  void call_may_die(const std::string& cmd, nlohmann::json args) {
    try {
      ControlClient c(sock);
      c.call(cmd, std::move(args), 60000);
    } catch (const std::exception&) {
      // The connection went down with the daemon.
    }
  }
};

class JournalCrashWhileRecording : public JournalCrash {};

TEST_P(JournalCrashWhileRecording, TheTreeStillRestores) {
  ASSERT_EQ(
      run_sh("cd " + root + " && printf 'v0\\n' > a.txt && mkdir d && echo x > d/x").exit_code, 0);
  mount_armed(GetParam());
  const std::string before = copy_before();
  const uint64_t t = leased_turn();
  // The first pre-image kills the daemon: the write it protects fails.
  RunResult w = sh("printf 'v1\\n' > a.txt");
  EXPECT_NE(w.exit_code, 0) << w.output;
  wait_dead_and_remount();
  EXPECT_EQ(signature(root), before);
  // What the journal holds of that turn (perhaps one entry, perhaps none) puts
  // the tree back to the same state.
  nlohmann::json u = call("undo", {{"turn", t}});
  if (u.value("ok", false)) {
    EXPECT_EQ(signature(root), before);
  } else {
    EXPECT_EQ(u["error"].value("code", ""), "not_found") << u.dump();
  }
  // And the journal keeps working: a new turn's changes undo cleanly.
  const std::string now = signature(root);
  const uint64_t t2 = leased_turn();
  ASSERT_EQ(sh("printf 'v2\\n' > a.txt && rm -rf d && echo n > n").exit_code, 0);
  ok("turn");
  ok("undo", {{"turn", t2}});
  EXPECT_EQ(signature(root), now);
}

INSTANTIATE_TEST_SUITE_P(Steps, JournalCrashWhileRecording,
                         ::testing::Values("journal.after_blob_write", "journal.before_index",
                                           "journal.after_index"));

// A rename's lines that need no sync ("did not exist" for the new name, and
// the rename's fact) are written to the index in one write, together, before
// the rename runs: a daemon killed right after it leaves them on disk, and undo
// takes the new name away again.
TEST_F(JournalCrash, ARenamesUnsyncedLinesAreWrittenBeforeItRuns) {
  ASSERT_EQ(run_sh("cd " + root + " && printf 'v0\\n' > a.txt && mkdir d").exit_code, 0);
  mount();
  const std::string before = copy_before();
  const uint64_t t = leased_turn();
  ASSERT_EQ(sh("mv a.txt d/b.txt && mv d/b.txt c.txt").exit_code, 0);
  const pid_t daemon = read_lock_pid(root + "/.longrun/lock");
  ASSERT_GT(daemon, 0);
  ::kill(daemon, SIGKILL);
  ASSERT_TRUE(wait_until([&] { return fuse::dead_leasefs_mount(root); }));
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ok("undo", {{"turn", t}});
  EXPECT_EQ(signature(root), before);
}

class JournalCrashDuringUndo : public JournalCrash {};

TEST_P(JournalCrashDuringUndo, ASecondRunFinishesIt) {
  ASSERT_EQ(run_sh("cd " + root +
                   " && printf 'one\\ntwo\\n' > a.txt && mkdir -p d/e && echo x > d/e/x && "
                   "echo y > d/y && mkdir m && echo z > m/z && ln -s a.txt l")
                .exit_code,
            0);
  mount_armed(GetParam());
  const std::string before = copy_before();
  const uint64_t t = leased_turn();
  ASSERT_EQ(sh("sed -i 's/two/TWO/' a.txt && rm -rf d && mv m m2 && echo new > m2/new && "
               "ln -sfn m2 l && chmod 600 a.txt")
                .exit_code,
            0);
  ok("turn");
  call_may_die("undo", {{"turn", t}});
  wait_dead_and_remount();
  nlohmann::json u = call("undo", {{"turn", t}});
  ASSERT_TRUE(u.value("ok", false)) << u.dump();
  EXPECT_EQ(signature(root), before);
}

INSTANTIATE_TEST_SUITE_P(Steps, JournalCrashDuringUndo,
                         ::testing::Values("undo.after_journal", "undo.after_remove",
                                           "undo.after_one"));

}  // namespace
}  // namespace leasefs::test

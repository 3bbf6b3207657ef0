// Attack class: the filesystem caches the path of an inode the gate judges
// without a file handle (fuse/inode_path_cache.hpp): the directory an entry is
// made, linked or removed in, and a file whose times, mode or size are set by
// name. The agent acts on a directory or file (its path is now cached), moves
// it to where its grant does not reach, into .git/hooks, or exchanges it with
// another, or hard-links it there and removes its first name, and then acts
// on it again by name. Each act must be judged by where it is now: refused,
// and nothing changes. The moves are allowed by a second grant, revoked before
// the next act, so that only the path can refuse it. The agent is uid 65534,
// one shell per step.
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "tests/security/pathcache_fixture.hpp"

namespace leasefs::test::pathcache {
namespace {

class ByNamePathCacheTest : public PathCacheTest {
 protected:
  // Runs `script` in the mounted root as the agent; its exit code and output.
  RunResult agent(const std::string& script) {
    return run_sh_as(kAgentUid, kAgentGid, script, d_.root(), 30);
  }
  // Output of `script` run in the root underneath, once the daemon is stopped.
  std::string underneath_sh(const std::string& script) {
    stop_daemon();
    RunOptions o;
    o.cwd = d_.root();
    return run_sh(script, o).output;
  }
  // Runs each command of `refused` as the agent and expects every one refused
  // with "Permission denied".
  void expect_refused(const std::vector<std::string>& refused) {
    for (const std::string& cmd : refused) {
      RunResult r = agent(cmd);
      EXPECT_NE(r.exit_code, 0) << cmd << " was allowed";
      EXPECT_NE(r.output.find("Permission denied"), std::string::npos) << cmd << ": " << r.output;
    }
  }
};

TEST_F(ByNamePathCacheTest, AnEntryInADirectoryMovedOutOfScopeIsRefused) {
  grant({"src/**"});
  const std::string b = grant({"docs/**"});
  RunResult r = agent("set -e; echo 1 > src/sub/a.c; mkdir src/sub/d; mv src/sub docs/sub");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  revoke(b);
  expect_refused({"echo evil > docs/sub/new.c", "mkdir docs/sub/newdir",
                  "ln docs/sub/a.c docs/sub/link.c", "rm docs/sub/a.c", "rmdir docs/sub/d",
                  "mv docs/sub/a.c docs/sub/moved.c"});
  EXPECT_EQ(underneath_sh("ls -A docs/sub | tr '\\n' ' '"), "a.c d ");
}

TEST_F(ByNamePathCacheTest, AnEntryInADirectoryMovedIntoHooksIsRefused) {
  grant({"src/**"});
  const std::string b = grant({".git/hooks/**"});
  RunResult r = agent("set -e; echo 1 > src/sub/a.c; mv src/sub .git/hooks/sub");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  revoke(b);
  expect_refused({"printf '#!/bin/sh\\n' > .git/hooks/sub/pre-commit", "mkdir .git/hooks/sub/x",
                  "rm .git/hooks/sub/a.c"});
  EXPECT_EQ(underneath_sh("ls -A .git/hooks/sub | tr '\\n' ' '"), "a.c ");
}

TEST_F(ByNamePathCacheTest, EntriesAfterAnExchangeOfDirectoriesAreJudgedByTheNewPathEachWay) {
  grant({"src/**"});
  const std::string b = grant({"docs/**"});
  RunResult r = agent(
      "set -e; mkdir docs/sub; echo 1 > src/sub/a.c; echo 2 > docs/sub/b.c; "
      "python3 -c \"import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
      "AT = -100; "
      "rc = libc.renameat2(AT, b'src/sub', AT, b'docs/sub', 2); "
      "os._exit(0 if rc == 0 else ctypes.get_errno())\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  revoke(b);
  // src/sub is now the directory that was docs/sub, and the other way round.
  expect_refused({"echo evil > docs/sub/new.c", "rm docs/sub/a.c"});
  r = agent("set -e; echo ok > src/sub/new.c; rm src/sub/b.c");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(underneath_sh("ls -A docs/sub src/sub | tr '\\n' ' '"),
            "docs/sub: a.c  src/sub: new.c ");
}

TEST_F(ByNamePathCacheTest, SettingTimesModeOrSizeOfAFileMovedOutOfScopeIsRefused) {
  grant({"src/**"});
  const std::string b = grant({"docs/**"});
  RunResult r = agent(
      "set -e; echo 1 > src/t.c; touch src/t.c; chmod 644 src/t.c; truncate -s 2 src/t.c; "
      "mv src/t.c docs/t.c");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  revoke(b);
  expect_refused({"touch -m -d @0 docs/t.c", "chmod 4755 docs/t.c", "truncate -s 0 docs/t.c"});
  EXPECT_EQ(underneath_sh("stat -c '%a %s' docs/t.c"), "644 2\n");
}

TEST_F(ByNamePathCacheTest, SettingTheModeOfAFileLinkedIntoHooksAndUnlinkedIsRefused) {
  grant({"src/**"});
  const std::string b = grant({".git/hooks/pre-push"});
  RunResult r = agent(
      "set -e; printf '#!/bin/sh\\n' > src/h.c; chmod 644 src/h.c; "
      "ln src/h.c .git/hooks/pre-push; rm src/h.c");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  revoke(b);
  expect_refused({"chmod 755 .git/hooks/pre-push", "truncate -s 0 .git/hooks/pre-push"});
  EXPECT_EQ(underneath_sh("stat -c '%a %s' .git/hooks/pre-push"), "644 10\n");
}

// The path of a file just created is remembered from the create itself; a
// write through the creating descriptor after the file moved out of scope
// must still be refused.
TEST_F(ByNamePathCacheTest, AWriteThroughTheCreatingDescriptorAfterAMoveOutOfScopeIsRefused) {
  grant({"src/**"});
  const std::string b = grant({"docs/**"});
  Lockstep child(
      [&](Lockstep& step) {
        return open_move_write(
            at("src/new.c"),
            [&] { return err(::rename(at("src/new.c").c_str(), at("docs/new.c").c_str())); }, step,
            O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC);
      },
      kAgent);
  ASSERT_EQ(child.await_child(), 'm') << "child exited " << child.join();
  revoke(b);
  child.go();
  EXPECT_EQ(child.join(), 0);
  stop_daemon();
  EXPECT_EQ(underneath("docs/new.c"), "1\n2\n");
}

}  // namespace
}  // namespace leasefs::test::pathcache

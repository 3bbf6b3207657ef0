// Attack class: a file opened for writing under a grant narrowed by path
// (`src/**`) is moved, while still open, to where the grant does not reach:
// another directory, a protected path (.git/config, .git/hooks/*), by renaming
// its directory, by RENAME_EXCHANGE, or by a hard link and the unlink of its
// first name. The filesystem caches the path a write is judged by; every write
// after the move must be judged by where the file is now (EACCES), and none of
// its bytes may land. The moves themselves are allowed by a second grant, which
// is revoked before the next write, so that only the path can refuse it.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/security/pathcache_fixture.hpp"

namespace leasefs::test::pathcache {
namespace {

TEST_F(PathCacheTest, WriteAfterRenameOutOfScopeIsRefused) {
  grant({"src/**"});
  const std::string b = grant({"docs/**"});
  Lockstep child(
      [&](Lockstep& step) {
        return open_move_write(
            at("src/a.c"),
            [&] { return err(::rename(at("src/a.c").c_str(), at("docs/a.c").c_str())); }, step);
      },
      kAgent);
  ASSERT_EQ(child.await_child(), 'm') << "child exited " << child.join();
  revoke(b);
  child.go();
  EXPECT_EQ(child.join(), 0);
  stop_daemon();
  EXPECT_EQ(underneath("docs/a.c"), "a\n1\n2\n");
}

TEST_F(PathCacheTest, WriteAfterRenameOntoProtectedPathIsRefused) {
  grant({"src/**"});
  for (const std::string target : {".git/hooks/pre-commit", ".git/config"}) {
    const std::string b = grant({target});
    Lockstep child(
        [&](Lockstep& step) {
          int fd = ::open(at("src/t.c").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
          if (fd < 0) return bail(step, 20);
          ::close(fd);
          return open_move_write(
              at("src/t.c"),
              [&] { return err(::rename(at("src/t.c").c_str(), at(target).c_str())); }, step);
        },
        kAgent);
    ASSERT_EQ(child.await_child(), 'm') << "child exited " << child.join() << target;
    revoke(b);
    child.go();
    EXPECT_EQ(child.join(), 0) << target;
  }
  stop_daemon();
  EXPECT_EQ(underneath(".git/hooks/pre-commit"), "1\n2\n");
  EXPECT_EQ(underneath(".git/config"), "1\n2\n");
}

TEST_F(PathCacheTest, WriteAfterParentDirectoryRenamedIsRefused) {
  grant({"src/**"});
  const std::string b = grant({"docs/**"});
  Lockstep child(
      [&](Lockstep& step) {
        int fd = ::open(at("src/sub/a.c").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) return bail(step, 20);
        ::close(fd);
        return open_move_write(
            at("src/sub/a.c"),
            [&] { return err(::rename(at("src/sub").c_str(), at("docs/sub").c_str())); }, step);
      },
      kAgent);
  ASSERT_EQ(child.await_child(), 'm') << "child exited " << child.join();
  revoke(b);
  child.go();
  EXPECT_EQ(child.join(), 0);
  stop_daemon();
  EXPECT_EQ(underneath("docs/sub/a.c"), "1\n2\n");
}

TEST_F(PathCacheTest, WriteAfterRenameExchangeIsJudgedByTheNewPathEachWay) {
  grant({"src/**"});
  const std::string b = grant({"docs/**"});
  Lockstep child(
      [&](Lockstep& step) {
        int a = ::open(at("src/a.c").c_str(), kWr);
        int d = ::open(at("docs/b.c").c_str(), kWr);
        if (a < 0 || d < 0) return bail(step, 1);
        if (write_errno(a, "1\n") != 0 || write_errno(d, "1\n") != 0) return bail(step, 2);
        if (::renameat2(AT_FDCWD, at("src/a.c").c_str(), AT_FDCWD, at("docs/b.c").c_str(),
                        RENAME_EXCHANGE) != 0) {
          return bail(step, 3);
        }
        step.tell('m');
        step.await();
        // `a` is docs/b.c now, which only the revoked grant covered; `d` is src/a.c.
        if (int r = expect_errno(write_errno(a, "LEAK\n"), EACCES, 4); r != 0) return r;
        return expect_errno(write_errno(d, "ok\n"), 0, 5);
      },
      kAgent);
  ASSERT_EQ(child.await_child(), 'm') << "child exited " << child.join();
  revoke(b);
  child.go();
  EXPECT_EQ(child.join(), 0);
  stop_daemon();
  EXPECT_EQ(underneath("docs/b.c"), "a\n1\n");
  EXPECT_EQ(underneath("src/a.c"), "b\n1\nok\n");
}

// The name the file was opened under is gone, the file lives on as a hook: the
// gone name is not where the file is (path_of), so only an unscoped grant covers
// it, even before the revocation.
TEST_F(PathCacheTest, WriteAfterHardLinkIntoHooksAndUnlinkIsRefused) {
  grant({"src/**"});
  const std::string b = grant({".git/hooks/pre-push"});
  Lockstep child(
      [&](Lockstep& step) {
        int fd = ::open(at("src/a.c").c_str(), kWr);
        if (fd < 0) return bail(step, 1);
        if (write_errno(fd, "1\n") != 0) return bail(step, 2);
        if (::link(at("src/a.c").c_str(), at(".git/hooks/pre-push").c_str()) != 0) {
          return bail(step, 3);
        }
        if (::unlink(at("src/a.c").c_str()) != 0) return bail(step, 4);
        step.tell('m');
        step.await();
        return expect_errno(write_errno(fd, "LEAK\n"), EACCES, 5);
      },
      kAgent);
  ASSERT_EQ(child.await_child(), 'm') << "child exited " << child.join();
  revoke(b);
  child.go();
  EXPECT_EQ(child.join(), 0);
  stop_daemon();
  EXPECT_EQ(underneath(".git/hooks/pre-push"), "a\n1\n");
}

// Not an attack: a rename the grant covers leaves the open file writable at its
// new name, and a file moved into scope becomes writable there.
TEST_F(PathCacheTest, WriteAfterAllowedRenameLandsAtTheNewPath) {
  grant({"src/**"});
  const std::string b = grant({"docs/**"});
  Lockstep child(
      [&](Lockstep& step) {
        int a = ::open(at("src/a.c").c_str(), kWr);
        int d = ::open(at("docs/b.c").c_str(), kWr);
        if (a < 0 || d < 0) return bail(step, 1);
        if (write_errno(a, "1\n") != 0) return bail(step, 2);
        if (::rename(at("src/a.c").c_str(), at("src/sub/z.c").c_str()) != 0) return bail(step, 3);
        if (write_errno(a, "2\n") != 0) return bail(step, 4);
        if (::rename(at("src/sub").c_str(), at("src/sub2").c_str()) != 0) return bail(step, 5);
        if (write_errno(a, "3\n") != 0) return bail(step, 6);
        if (::rename(at("docs/b.c").c_str(), at("src/b.c").c_str()) != 0) return bail(step, 7);
        step.tell('m');
        step.await();
        if (write_errno(a, "4\n") != 0) return 8;
        return expect_errno(write_errno(d, "in\n"), 0, 9);
      },
      kAgent);
  ASSERT_EQ(child.await_child(), 'm') << "child exited " << child.join();
  revoke(b);
  child.go();
  EXPECT_EQ(child.join(), 0);
  stop_daemon();
  EXPECT_EQ(underneath("src/sub2/z.c"), "a\n1\n2\n3\n4\n");
  EXPECT_EQ(underneath("src/b.c"), "b\nin\n");
}

// Not an attack: the same with the second name in scope stays writable, through
// the open descriptor and through the new name.
TEST_F(PathCacheTest, WriteAfterHardLinkInScopeAndUnlinkLandsAtTheLiveName) {
  grant({"src/**"});
  Lockstep child(
      [&](Lockstep& step) {
        int fd = ::open(at("src/a.c").c_str(), kWr);
        if (fd < 0) return bail(step, 1);
        if (::link(at("src/a.c").c_str(), at("src/sub/b.c").c_str()) != 0) return bail(step, 2);
        if (::unlink(at("src/a.c").c_str()) != 0) return bail(step, 3);
        if (write_errno(fd, "1\n") != 0) return bail(step, 4);
        int again = ::open(at("src/sub/b.c").c_str(), kWr);
        if (again < 0) return bail(step, 5);
        step.tell('m');
        return expect_errno(write_errno(again, "2\n"), 0, 6);
      },
      kAgent);
  ASSERT_EQ(child.await_child(), 'm') << "child exited " << child.join();
  EXPECT_EQ(child.join(), 0);
  stop_daemon();
  EXPECT_EQ(underneath("src/sub/b.c"), "a\n1\n2\n");
}

}  // namespace
}  // namespace leasefs::test::pathcache

// A process waiting through the mount for a BSD lock another one holds has a
// worker of the daemon waiting in flock() underneath. A signal to the waiting
// process ends its wait as natively (EINTR, as `flock -w` relies on), and the
// daemon's worker with it: before, the worker stayed until the lock was let go,
// and so did the process.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/security/fileplane_support.hpp"

namespace leasefs::test::fileplane {
namespace {

void on_alarm(int) {}

TEST(LockWait, ASignalEndsAWaitForALockHeldThroughTheMount) {
  MountedFs fs;
  ASSERT_TRUE(in_backing(fs, "echo x > locked; chmod 644 locked").ok());
  const std::string locked = fs.mnt() + "/locked";
  int held[2];
  ASSERT_EQ(::pipe(held), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    int fd = ::open(locked.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
    (void)!::write(held[1], "1", 1);
    ::sleep(10);  // lets go in the end, so that a wait that is not ended ends here
    ::_exit(0);
  }
  char one = 0;
  ASSERT_EQ(::read(held[0], &one, 1), 1);
  // The waiter: a signal with a handler (no SA_RESTART) one second into its wait.
  const int rc = as_agent([&] {
    struct sigaction sa {};
    sa.sa_handler = on_alarm;
    ::sigaction(SIGALRM, &sa, nullptr);
    int fd = ::open(locked.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 100;
    ::alarm(1);
    return err_of(::flock(fd, LOCK_EX));
  });
  EXPECT_EQ(rc, EINTR);
  // The lock is still the holder's: the interrupted waiter took nothing.
  EXPECT_EQ(as_agent([&] {
              int fd = ::open(locked.c_str(), O_RDONLY | O_CLOEXEC);
              return fd < 0 ? 100 : err_of(::flock(fd, LOCK_EX | LOCK_NB));
            }),
            EWOULDBLOCK);
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  ::close(held[0]);
  ::close(held[1]);
}

}  // namespace
}  // namespace leasefs::test::fileplane

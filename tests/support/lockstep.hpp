// A child process that runs in lockstep with the test through two pipes: the
// child tells the test where it is (tell), the test lets it go on (go). For
// what must happen in another process, such as a shared mapping whose writeback
// the FUSE server in the test process serves, or an act of the agent's uid.
//   Lockstep child([&](Lockstep& step) { ...; step.tell('m'); step.await(); ...; return 0; });
//   ASSERT_EQ(child.await_child(), 'm');
//   child.go();
//   EXPECT_EQ(child.join(), 0);
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <optional>
#include <stdexcept>

namespace leasefs::test {

// Whom the child runs as: the uid and gid, with no supplementary groups.
struct RunAs {
  uid_t uid;
  gid_t gid;
};

class Lockstep {
 public:
  // Forks; the child drops to `as` (exit 254 if it cannot), runs `body` and
  // exits with its return value.
  explicit Lockstep(const std::function<int(Lockstep&)>& body,
                    std::optional<RunAs> as = std::nullopt) {
    if (::pipe2(up_, O_CLOEXEC) != 0 || ::pipe2(down_, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      if (as && (::setgroups(0, nullptr) != 0 || ::setresgid(as->gid, as->gid, as->gid) != 0 ||
                 ::setresuid(as->uid, as->uid, as->uid) != 0)) {
        ::_exit(254);
      }
      ::_exit(body(*this) & 0xff);
    }
  }
  ~Lockstep() {
    if (pid_ > 0) join(5);
    for (int fd : {up_[0], up_[1], down_[0], down_[1]}) ::close(fd);
  }
  Lockstep(const Lockstep&) = delete;
  Lockstep& operator=(const Lockstep&) = delete;

  // Child side.
  void tell(char c) { (void)!::write(up_[1], &c, 1); }
  char await() { return read_one(down_[0]); }
  // Test side.
  char await_child() { return read_one(up_[0]); }
  void go(char c = 'g') { (void)!::write(down_[1], &c, 1); }
  // The child's exit code; -1 if it had to be killed after `timeout_s`.
  int join(int timeout_s = 60) {
    int status = 0;
    for (int i = 0; i < timeout_s * 100; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      ::usleep(10'000);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return -1;
  }

 private:
  static char read_one(int fd) {
    char c = 0;
    return ::read(fd, &c, 1) == 1 ? c : '?';
  }
  int up_[2]{}, down_[2]{};
  pid_t pid_ = -1;
};

}  // namespace leasefs::test

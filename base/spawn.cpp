#include "base/spawn.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace leasefs::base {

namespace {

int64_t mono_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

RunResult run_argv(const std::vector<std::string>& argv, const RunOptions& options) {
  RunResult result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return result;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return result;
  }
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    ::setpgid(0, 0);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    if (options.uid) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(options.gid) != 0 ||
          ::setuid(*options.uid) != 0) {
        ::_exit(126);
      }
    }
    ::execvp(args[0], args.data());
    static const char kCannot[] = "cannot run ";
    (void)!::write(2, kCannot, sizeof kCannot - 1);
    (void)!::write(2, args[0], ::strlen(args[0]));
    (void)!::write(2, "\n", 1);
    ::_exit(127);
  }
  ::close(fds[1]);
  const int64_t deadline = mono_ms() + int64_t{options.timeout_s} * 1000;
  bool killed = false;
  char buf[4096];
  while (true) {
    int64_t left = deadline - mono_ms();
    if (left <= 0 && !killed) {
      ::kill(-pid, SIGKILL);
      killed = true;
      result.output += "\n[run: timed out, killed]\n";
      left = 1000;
    }
    pollfd p{fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      if (killed) break;
      continue;
    }
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

RunResult run_sh(const std::string& script, const RunOptions& options) {
  return run_argv({"/bin/sh", "-c", script}, options);
}

}  // namespace leasefs::base

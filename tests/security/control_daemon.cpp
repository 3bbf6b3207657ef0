#include "tests/security/control_daemon.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "daemon/mount_table.hpp"
#include "tests/support/daemon_run.hpp"
#include "tests/support/mounted_fs.hpp"

namespace leasefs::test {

ControlDaemon::ControlDaemon()
    : site_("leasefs-sec-"), root_(site_.add_root()), sock_(site_.base + "/ctl.sock") {}

RunResult ControlDaemon::mount(const std::vector<std::string>& extra) {
  std::string group = "nogroup";
  if (struct group* g = ::getgrgid(kAgentGid)) group = g->gr_name;
  std::vector<std::string> args = {"mount", root_, "--socket", sock_, "--socket-group", group};
  args.insert(args.end(), extra.begin(), extra.end());
  RunResult r = run_binary(LEASEFS_BIN, args);
  site_.remember(pid());
  return r;
}

pid_t ControlDaemon::pid() const {
  if (!base::leasefs_mount_at(root_)) return site_.daemons.empty() ? 0 : site_.daemons.back();
  pid_t p = read_lock_pid(root_ + "/.longrun/lock");
  site_.remember(p);
  return p;
}

bool ControlDaemon::mounted() const {
  return base::leasefs_mount_at(root_).has_value();
}

bool ControlDaemon::stop_with(int sig, int within_ms) {
  pid_t p = pid();
  if (p <= 0) return false;
  ::kill(p, sig);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(within_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    // The daemon was started by `leasefs mount`, which has exited: it is not our
    // child, so kill(0) says whether it still exists.
    if (::kill(p, 0) != 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

pid_t spawn_agent(const std::function<int()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kAgentGid) != 0 || ::setuid(kAgentUid) != 0) {
      ::_exit(120);
    }
    int rc = 121;
    try {
      rc = body();
    } catch (...) {
    }
    ::_exit(rc);
  }
  return pid;
}

int wait_child(pid_t pid, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill_child(pid);
      return -2;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void kill_child(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

int connect_unix(const std::string& socket) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket.c_str(), socket.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string call_line(const std::string& socket, const std::string& line, int timeout_ms) {
  int fd = connect_unix(socket);
  if (fd < 0) return "";
  std::string reply;
  {
    std::string data = line + "\n";
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (reply.find('\n') == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) break;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[4096];
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      reply.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  auto nl = reply.find('\n');
  return nl == std::string::npos ? std::string() : reply.substr(0, nl);
}

}  // namespace leasefs::test

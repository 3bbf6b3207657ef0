#include "protocol/daemon_discovery.hpp"

#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/mountinfo.hpp"
#include "protocol/socket_path.hpp"

namespace leasefs::protocol {

namespace {

struct Mount {
  std::string mountpoint;
  std::string fstype;
  std::string source;
  std::optional<uid_t> owner;  // user_id= of a FUSE mount
};

std::optional<uid_t> user_id_option(const std::string& options) {
  std::istringstream in(options);
  std::string opt;
  while (std::getline(in, opt, ',')) {
    if (opt.rfind("user_id=", 0) != 0) continue;
    char* end = nullptr;
    errno = 0;
    unsigned long v = std::strtoul(opt.c_str() + 8, &end, 10);
    if (errno != 0 || *end != '\0' || end == opt.c_str() + 8) return std::nullopt;
    return static_cast<uid_t>(v);
  }
  return std::nullopt;
}

// The mounts whose mount point contains `path`, in the order the kernel lists
// them (a mount made later on the same point comes later: it is on top).
std::vector<Mount> mounts_containing(const std::string& path) {
  std::vector<Mount> out;
  for (const auto& e : base::read_mountinfo()) {
    Mount m{e.mount_point, e.fstype, e.source, user_id_option(e.super_options)};
    const bool contains =
        m.mountpoint == "/" ||
        (path.compare(0, m.mountpoint.size(), m.mountpoint) == 0 &&
         (path.size() == m.mountpoint.size() || path[m.mountpoint.size()] == '/'));
    if (contains) out.push_back(std::move(m));
  }
  return out;
}

std::string in_mount(const std::string& mountpoint, const char* rel) {
  return mountpoint == "/" ? std::string("/") + rel : mountpoint + "/" + rel;
}

std::string uid_text(uid_t uid) {
  return uid == 0 ? std::string("root") : "uid " + std::to_string(uid);
}

constexpr const char* kNameIt =
    "If you trust it anyway, name its socket with --socket PATH or LEASEFS_SOCKET.";

}  // namespace

std::string format_socket_pointer(std::string_view socket, pid_t pid) {
  return std::string(socket) + "\npid " + std::to_string(pid) + "\n";
}

std::optional<SocketPointer> parse_socket_pointer(std::string_view text) {
  SocketPointer p;
  const size_t nl = text.find('\n');
  p.socket = std::string(text.substr(0, nl));
  while (!p.socket.empty() && (p.socket.back() == ' ' || p.socket.back() == '\r')) {
    p.socket.pop_back();
  }
  if (p.socket.empty()) return std::nullopt;
  if (nl != std::string_view::npos) {
    std::string_view rest = text.substr(nl + 1);
    if (rest.rfind("pid ", 0) == 0) {
      p.pid = static_cast<pid_t>(std::strtol(std::string(rest.substr(4)).c_str(), nullptr, 10));
      if (p.pid < 0) p.pid = 0;
    }
  }
  return p;
}

Discovery discover_daemon(std::string_view dir, uid_t self) {
  Discovery out;
  char resolved[PATH_MAX];
  const std::string dir_s(dir);
  if (!::realpath(dir_s.c_str(), resolved)) {
    out.problem = dir_s + ": " + std::strerror(errno);
    return out;
  }
  const std::string path = resolved;
  const auto mounts = mounts_containing(path);

  // The top of the stack at `path`: the deepest mount point, the last one listed.
  const Mount* top = nullptr;
  for (const auto& m : mounts) {
    if (!top || m.mountpoint.size() >= top->mountpoint.size()) top = &m;
  }
  const Mount* lower_leasefs = nullptr;
  for (const auto& m : mounts) {
    if (&m != top && m.fstype == "fuse.leasefs") lower_leasefs = &m;
  }
  if (!top || (top->fstype != "fuse.leasefs" && !lower_leasefs)) {
    out.problem = path + " is not inside a leasefs mount";
    return out;
  }
  if (top->fstype != "fuse.leasefs") {
    out.untrusted = true;
    out.problem = path + " is on a " + top->fstype + " mount at " + top->mountpoint +
                  (top->owner ? " (mounted by " + uid_text(*top->owner) + ")" : std::string()) +
                  " stacked over the leasefs mount at " + lower_leasefs->mountpoint +
                  "; leasectl does not look for the daemon through it. Run it outside " +
                  top->mountpoint + ". " + kNameIt;
    return out;
  }
  if (lower_leasefs) {
    out.untrusted = true;
    out.problem = "the leasefs mount at " + top->mountpoint + " (mounted by " +
                  (top->owner ? uid_text(*top->owner) : std::string("an unknown user")) +
                  ") is stacked inside the leasefs mount at " + lower_leasefs->mountpoint +
                  "; nested leasefs mounts are not supported and leasectl does not trust one. "
                  "Ask root to remove it (`fusermount3 -uz " +
                  top->mountpoint + "`). " + kNameIt;
    return out;
  }
  if (!top->owner || (*top->owner != 0 && *top->owner != self)) {
    out.untrusted = true;
    out.problem = "the leasefs mount at " + top->mountpoint + " was mounted by " +
                  (top->owner ? uid_text(*top->owner) : std::string("an unknown user")) +
                  ", not by root or by you (" + uid_text(self) +
                  "); leasectl does not trust its daemon. " + kNameIt;
    return out;
  }

  DiscoveredDaemon d;
  d.mountpoint = top->mountpoint;
  d.root = top->source;
  d.owner = *top->owner;
  // The daemon records its socket and pid in .longrun/socket, read through the
  // mount: only the daemon can write .longrun.
  std::ifstream pointer(in_mount(top->mountpoint, ".longrun/socket"));
  if (pointer) {
    std::string text((std::istreambuf_iterator<char>(pointer)), std::istreambuf_iterator<char>());
    if (auto p = parse_socket_pointer(text)) {
      d.socket = p->socket;
      d.pid = p->pid;
    }
  }
  if (d.socket.empty()) {
    // Not readable here (.longrun is the daemon's alone unless it was mounted with
    // --agent): the default place for the root, which only its owner can bind.
    if (d.owner == 0) {
      d.socket = "/run/leasefs/" + escape_instance(d.root) + ".sock";
    } else if (const char* xdg = ::getenv("XDG_RUNTIME_DIR"); xdg && *xdg == '/') {
      d.socket = std::string(xdg) + "/leasefs/" + escape_instance(d.root) + ".sock";
    } else {
      out.problem = "cannot read " + in_mount(top->mountpoint, ".longrun/socket") +
                    " and there is no default socket for a daemon owned by " + uid_text(d.owner);
      return out;
    }
  }
  out.daemon = std::move(d);
  return out;
}

std::optional<std::string> check_daemon_peer(int fd, const DiscoveredDaemon& d) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
    return "cannot tell who holds " + d.socket + " (SO_PEERCRED: " + std::strerror(errno) + ")";
  }
  if (cred.uid != 0 && cred.uid != d.owner) {
    return "the socket " + d.socket + " is held by " + uid_text(cred.uid) + " (pid " +
           std::to_string(cred.pid) + "), not by root or by " + uid_text(d.owner) +
           " who mounted " + d.mountpoint +
           ": it is not the daemon serving this tree, and leasectl will not talk to it. " + kNameIt;
  }
  if (d.pid > 0 && cred.pid != d.pid) {
    return "the socket " + d.socket + " answers from pid " + std::to_string(cred.pid) +
           ", but the daemon serving " + d.mountpoint + " is pid " + std::to_string(d.pid) +
           " (.longrun/socket): it belongs to another daemon, and leasectl will not talk to "
           "it. " +
           kNameIt;
  }
  return std::nullopt;
}

}  // namespace leasefs::protocol

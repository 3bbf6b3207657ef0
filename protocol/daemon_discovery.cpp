#include "protocol/daemon_discovery.hpp"

#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "base/mountinfo.hpp"
#include "protocol/daemon_registry.hpp"

namespace leasefs::protocol {

namespace {

std::string uid_text(uid_t uid) {
  return uid == 0 ? std::string("root") : "uid " + std::to_string(uid);
}

constexpr const char* kNameIt =
    "If you trust it anyway, name its socket with --socket PATH or LEASEFS_SOCKET.";

// `dir` made absolute and normalized by its text alone (".", ".." and repeated
// slashes), so that nothing mounted on it is entered or asked.
std::string lexical_path(std::string_view dir) {
  std::string in(dir);
  if (in.empty() || in[0] != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd)) in = std::string(cwd) + "/" + in;
  }
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= in.size()) {
    size_t slash = in.find('/', pos);
    if (slash == std::string::npos) slash = in.size();
    const std::string name = in.substr(pos, slash - pos);
    if (name == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!name.empty() && name != ".") {
      parts.push_back(name);
    }
    pos = slash + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

// The registered daemons that this mount table confirms: the entry's mount is
// still there, a fuse.leasefs mount made by the entry's owner.
std::vector<RegistryEntry> confirmed_daemons(uid_t self) {
  std::vector<RegistryEntry> entries = read_registry(registry_dir(0), 0);
  if (self != 0) {
    if (const std::string mine = registry_dir(self); !mine.empty()) {
      for (auto& e : read_registry(mine, self)) entries.push_back(std::move(e));
    }
  }
  const auto table = base::read_mountinfo();
  std::vector<RegistryEntry> out;
  for (auto& e : entries) {
    for (const auto& m : table) {
      if (m.mount_id == e.mount_id && m.fstype == "fuse.leasefs" && m.device == e.device &&
          m.mount_point == e.mountpoint && base::fuse_owner(m) == e.owner) {
        out.push_back(std::move(e));
        break;
      }
    }
  }
  return out;
}

std::vector<RegistryEntry> serving(const std::vector<RegistryEntry>& daemons,
                                   const std::string& path) {
  std::vector<RegistryEntry> out;
  for (const auto& e : daemons) {
    if (base::path_within(path, e.mountpoint) || base::path_within(path, e.root)) {
      out.push_back(e);
    }
  }
  return out;
}

}  // namespace

Discovery discover_daemon(std::string_view dir, uid_t self) {
  Discovery out;
  std::string path = lexical_path(dir);
  const auto daemons = confirmed_daemons(self);
  auto found = serving(daemons, path);
  if (found.empty()) {
    // Perhaps a symlink leads into a served tree: only now is the path resolved.
    char resolved[PATH_MAX];
    if (!::realpath(path.c_str(), resolved)) {
      out.problem = path + ": " + std::strerror(errno);
      return out;
    }
    path = resolved;
    found = serving(daemons, path);
  }
  if (found.size() > 1) {
    out.problem = path + " is in the trees of " + std::to_string(found.size()) + " daemons:";
    for (const auto& e : found) {
      out.problem += " pid " + std::to_string(e.pid) + " (root " + e.root + ", mounted at " +
                     e.mountpoint + ", socket " + e.socket + ");";
    }
    out.problem += " name one with --socket PATH or LEASEFS_SOCKET";
    return out;
  }
  if (found.empty()) {
    // A leasefs mount that no daemon registered is somebody else's.
    for (const auto& m : base::read_mountinfo()) {
      if (m.fstype != "fuse.leasefs" || !base::path_within(path, m.mount_point)) continue;
      const auto owner = base::fuse_owner(m);
      out.untrusted = true;
      out.problem = "the leasefs mount at " + m.mount_point + " (mounted by " +
                    (owner ? uid_text(*owner) : std::string("an unknown user")) +
                    ") is served by no daemon in " + registry_dir(0) +
                    (self != 0 ? " or in your own registry" : "") +
                    "; leasectl does not trust it. " + kNameIt;
    }
    if (!out.untrusted) {
      out.problem =
          path + " is not inside a leasefs mount (no daemon in " + registry_dir(0) + " serves it)";
    }
    return out;
  }
  // Root's registry holds root's daemons and the caller's holds the caller's
  // (read_registry checks each entry's owner): the owner is root or the caller.
  const RegistryEntry& e = found.front();
  out.daemon = DiscoveredDaemon{e.socket, e.mountpoint, e.root, e.owner, e.pid};
  return out;
}

std::vector<DiscoveredDaemon> trusted_daemons(uid_t self) {
  std::vector<DiscoveredDaemon> out;
  for (auto& e : confirmed_daemons(self)) {
    out.push_back(DiscoveredDaemon{e.socket, e.mountpoint, e.root, e.owner, e.pid});
  }
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
  if (cred.pid != d.pid) {
    return "the socket " + d.socket + " answers from pid " + std::to_string(cred.pid) +
           ", but the daemon serving " + d.mountpoint + " is pid " + std::to_string(d.pid) +
           " (its registry entry): it belongs to another daemon, and leasectl will not talk to "
           "it. " +
           kNameIt;
  }
  return std::nullopt;
}

Client connect_daemon(const DiscoveredDaemon& d) {
  Client client = Client::connect(d.socket);
  if (d.pid != 0) {
    if (auto why = check_daemon_peer(client.fd(), d)) throw UntrustedDaemon(*why);
  }
  return client;
}

}  // namespace leasefs::protocol

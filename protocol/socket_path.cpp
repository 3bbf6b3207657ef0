#include "protocol/socket_path.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <fstream>

#include "base/mountinfo.hpp"

namespace leasefs::gate {

namespace {

bool contains_path(std::string_view mountpoint, std::string_view path) {
  if (mountpoint == "/") return true;
  if (path.substr(0, mountpoint.size()) != mountpoint) return false;
  return path.size() == mountpoint.size() || path[mountpoint.size()] == '/';
}

}  // namespace

std::string escape_instance(std::string_view root_path) {
  // As systemd-escape --path: collapse duplicate slashes, strip leading and
  // trailing ones, '/' -> '-', keep [A-Za-z0-9:_.] (a leading '.' is escaped),
  // everything else as \xNN. The root directory itself is "-".
  std::string trimmed;
  for (char c : root_path) {
    if (c == '/' && (trimmed.empty() || trimmed.back() == '/')) continue;
    trimmed.push_back(c);
  }
  while (!trimmed.empty() && trimmed.back() == '/') trimmed.pop_back();
  if (trimmed.empty()) return "-";

  std::string out;
  for (size_t i = 0; i < trimmed.size(); ++i) {
    auto c = static_cast<unsigned char>(trimmed[i]);
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == ':' || c == '_' || (c == '.' && i > 0);
    if (c == '/') {
      out.push_back('-');
    } else if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string default_socket_path(std::string_view root_path) {
  std::string instance = escape_instance(root_path) + ".sock";
  if (::geteuid() != 0) {
    const char* xdg = ::getenv("XDG_RUNTIME_DIR");
    if (xdg && *xdg == '/') return std::string(xdg) + "/leasefs/" + instance;
  }
  return "/run/leasefs/" + instance;
}

std::optional<std::string> discover_socket(std::string_view dir) {
  char resolved[PATH_MAX];
  std::string dir_s(dir);
  if (!::realpath(dir_s.c_str(), resolved)) return std::nullopt;
  std::string path = resolved;

  std::string best;
  for (const auto& m : base::read_mountinfo()) {
    if (m.fstype != "fuse.leasefs") continue;
    if (contains_path(m.mount_point, path) && m.mount_point.size() > best.size()) {
      best = m.mount_point;
    }
  }
  if (best.empty()) return std::nullopt;

  std::ifstream socket_file(best == "/" ? "/.longrun/socket" : best + "/.longrun/socket");
  if (!socket_file) return std::nullopt;
  std::string socket;
  std::getline(socket_file, socket);
  while (!socket.empty() && (socket.back() == '\n' || socket.back() == ' ')) socket.pop_back();
  if (socket.empty()) return std::nullopt;
  return socket;
}

}  // namespace leasefs::gate

#include "protocol/socket_path.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>

namespace leasefs::protocol {

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

}  // namespace leasefs::protocol

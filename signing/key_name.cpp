#include "signing/key_name.hpp"

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <fstream>

#include "signing/verifier_key.hpp"

namespace leasefs::signing {
namespace {

std::string machine_id(const char* path) {
  std::ifstream in(path);
  std::string id;
  std::getline(in, id);
  if (id.size() != 32 || id.find_first_not_of("0123456789abcdef") != std::string::npos) return {};
  return id;
}

// `text` with every byte a key name may not hold written as %XX.
std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '+' || c == '%') {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string machine_key_name() {
  for (const char* path : {"/etc/machine-id", "/var/lib/dbus/machine-id"}) {
    if (std::string id = machine_id(path); !id.empty()) return "leasefs/" + id;
  }
  char host[HOST_NAME_MAX + 1] = "";
  if (::gethostname(host, sizeof host) != 0) host[0] = '\0';
  host[HOST_NAME_MAX] = '\0';
  const std::string name = "leasefs/host-" + escaped(host);
  return valid_key_name(name) ? name : "leasefs/host-unknown";
}

std::string log_origin(std::string_view key_name, std::string_view root_path) {
  return std::string(key_name) + escaped(root_path);
}

}  // namespace leasefs::signing

#include "journal/xattrs.hpp"

#include <sys/types.h>
#include <sys/xattr.h>

#include "base/json_text.hpp"

namespace leasefs::journal {

namespace {

constexpr std::string_view kHexName = "hex:";

}  // namespace

std::string hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string xattr_name(const std::string& kept) {
  if (kept.compare(0, kHexName.size(), kHexName) != 0) return kept;
  return unhex(kept.substr(kHexName.size()));
}

std::map<std::string, std::string> read_xattrs(int fd) {
  std::map<std::string, std::string> out;
  ssize_t n = ::flistxattr(fd, nullptr, 0);
  if (n <= 0) return out;
  std::string names(static_cast<size_t>(n), '\0');
  n = ::flistxattr(fd, names.data(), names.size());
  if (n <= 0) return out;
  names.resize(static_cast<size_t>(n));
  for (size_t i = 0; i < names.size();) {
    std::string name(names.c_str() + i);
    i += name.size() + 1;
    ssize_t vn = ::fgetxattr(fd, name.c_str(), nullptr, 0);
    if (vn < 0) continue;
    std::string value(static_cast<size_t>(vn), '\0');
    vn = ::fgetxattr(fd, name.c_str(), value.data(), value.size());
    if (vn < 0) continue;
    value.resize(static_cast<size_t>(vn));
    out[base::is_utf8(name) ? name : std::string(kHexName) + hex(name)] = hex(value);
  }
  return out;
}

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  }
  return out;
}

}  // namespace leasefs::journal

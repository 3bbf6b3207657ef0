#include "journal/xattrs.hpp"

#include <sys/types.h>
#include <sys/xattr.h>

namespace leasefs::journal {

namespace {

std::string hex(const char* data, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(data[i]);
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

}  // namespace

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
    out[name] = hex(value.data(), static_cast<size_t>(vn));
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

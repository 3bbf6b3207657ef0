#include "control/socket_acl.hpp"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace leasefs::control {

namespace {

// linux/posix_acl_xattr.h, little-endian on the wire.
constexpr uint32_t kVersion = 2;
constexpr uint16_t kUserObj = 0x01, kUser = 0x02, kGroupObj = 0x04, kGroup = 0x08, kMask = 0x10,
                   kOther = 0x20;
constexpr uint32_t kUndefinedId = 0xffffffffu;
constexpr uint16_t kReadWrite = 6;

void put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>(v >> 8));
}
void put32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void entry(std::string& out, uint16_t tag, uint16_t perm, uint32_t id) {
  put16(out, tag);
  put16(out, perm);
  put32(out, id);
}

}  // namespace

std::optional<std::string> allow_on_socket(const std::string& path, const std::vector<uid_t>& uids,
                                           const std::vector<gid_t>& gids) {
  if (uids.empty() && gids.empty()) return std::nullopt;
  std::vector<uid_t> u(uids);
  std::vector<gid_t> g(gids);
  std::sort(u.begin(), u.end());
  u.erase(std::unique(u.begin(), u.end()), u.end());
  std::sort(g.begin(), g.end());
  g.erase(std::unique(g.begin(), g.end()), g.end());
  // The owning group keeps what the socket's mode gives it (0660 for the agent's
  // group or --socket-group, nothing for a socket of the owner's alone).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return "cannot give the approvers access to " + path + ": " + std::strerror(errno);
  }
  const uint16_t group = (st.st_mode & S_IRWXG) ? kReadWrite : 0;
  // Entries in the kernel's order: by tag, then by id.
  std::string acl;
  put32(acl, kVersion);
  entry(acl, kUserObj, kReadWrite, kUndefinedId);
  for (uid_t id : u) entry(acl, kUser, kReadWrite, id);
  entry(acl, kGroupObj, group, kUndefinedId);
  for (gid_t id : g) entry(acl, kGroup, kReadWrite, id);
  entry(acl, kMask, kReadWrite, kUndefinedId);
  entry(acl, kOther, 0, kUndefinedId);
  if (::setxattr(path.c_str(), "system.posix_acl_access", acl.data(), acl.size(), 0) != 0) {
    return "cannot give the approvers access to " + path + " (POSIX ACL): " + std::strerror(errno);
  }
  return std::nullopt;
}

}  // namespace leasefs::control

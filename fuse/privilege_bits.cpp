#include "fuse/privilege_bits.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "fuse/filesystem.hpp"

namespace leasefs::fuse {

namespace {

constexpr int kCapFsetid = 4;  // linux/capability.h

// The caller's effective capabilities and supplementary groups, from
// /proc/<pid>/status; a caller that cannot be read (gone, or from another pid
// namespace) has neither, so its changes drop the bits.
struct CallerCreds {
  uint64_t cap_eff = 0;
  std::string groups;  // " 4 24 27 " (space-separated, padded)
};

CallerCreds creds_of(pid_t pid) {
  CallerCreds out;
  if (pid <= 0) return out;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) == 0) {
      out.cap_eff = std::stoull(line.substr(7), nullptr, 16);
    } else if (line.rfind("Groups:", 0) == 0) {
      out.groups = " " + line.substr(7) + " ";
      for (char& c : out.groups) {
        if (c == '\t') c = ' ';
      }
    }
  }
  return out;
}

// The bits to clear: 0 for none.
mode_t privilege_bits_to_drop(fuse_req_t req, mode_t mode, gid_t gid) {
  if (!S_ISREG(mode) || (mode & (S_ISUID | S_ISGID)) == 0) return 0;
  const fuse_ctx* ctx = fuse_req_ctx(req);
  const CallerCreds creds = creds_of(ctx->pid);
  if (creds.cap_eff & (uint64_t{1} << kCapFsetid)) return 0;
  mode_t drop = mode & S_ISUID;
  if (mode & S_ISGID) {
    const bool in_group =
        ctx->gid == gid || creds.groups.find(" " + std::to_string(gid) + " ") != std::string::npos;
    if ((mode & S_IXGRP) || !in_group) drop |= S_ISGID;
  }
  return drop;
}

}  // namespace

int drop_privilege_bits(fuse_req_t req, fuse_ino_t ino, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return -errno;
  const mode_t drop = privilege_bits_to_drop(req, st.st_mode, st.st_gid);
  if (drop == 0) return 0;
  if (::fchmodat(AT_FDCWD, Filesystem::fd_path(fd).c_str(), st.st_mode & 07777 & ~drop, 0) != 0) {
    return -errno;
  }
  Filesystem::of(req).pages().attributes(ino);
  return 0;
}

}  // namespace leasefs::fuse

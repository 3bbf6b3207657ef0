#include "daemon/mount_table.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <fstream>
#include <sstream>

extern char** environ;

namespace leasefs::fuse {

namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (size_t k = 1; k <= 3; ++k) {
        char c = s[i + k];
        if (c < '0' || c > '7') ok = false;
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace

std::vector<MountEntry> read_mounts() {
  std::vector<MountEntry> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // id parent maj:min root mount-point options [optional...] - fstype source super
    std::istringstream ss(line);
    std::string id, parent, dev, root, mp, opts, field;
    ss >> id >> parent >> dev >> root >> mp >> opts;
    while (ss >> field && field != "-") {
    }
    MountEntry e;
    e.device = dev;
    ss >> e.fstype >> e.source;
    e.mount_point = unescape(mp);
    e.source = unescape(e.source);
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<MountEntry> leasefs_mount_at(const std::string& path) {
  std::optional<MountEntry> found;
  for (auto& e : read_mounts()) {
    // The last one listed is the one on top.
    if (e.mount_point == path && e.fstype == "fuse.leasefs") found = e;
  }
  return found;
}

bool fusermount(const std::vector<std::string>& args, const std::string& path) {
  std::vector<std::string> argv_s = {"fusermount3"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  argv_s.push_back(path);
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (::posix_spawnp(&pid, "fusermount3", nullptr, nullptr, argv.data(), environ) != 0) {
    return false;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace leasefs::fuse

#include "daemon/busy_root.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace leasefs::daemon {

namespace {

bool under(const std::string& path, const std::string& root) {
  if (root == "/") return !path.empty() && path[0] == '/';
  return path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/');
}

std::string read_link(const std::string& link) {
  char buf[PATH_MAX + 1];
  const ssize_t n = ::readlink(link.c_str(), buf, PATH_MAX);
  if (n <= 0) return {};
  std::string out(buf, static_cast<size_t>(n));
  constexpr std::string_view kDeleted = " (deleted)";
  if (out.ends_with(kDeleted)) out.resize(out.size() - kDeleted.size());
  return out;
}

// `link` (a /proc magic link) names something under `root` on `dev`. The
// object is pinned with an O_PATH open before its name and device are read:
// read straight from the link, the two could belong to different objects when
// the process moves in between.
bool reaches(const std::string& link, const std::string& root, dev_t dev, std::string* target) {
  *target = read_link(link);
  if (target->empty() || !under(*target, root)) return false;  // cheap filter first
  const int fd = ::open(link.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  const bool on_dev = ::fstat(fd, &st) == 0 && st.st_dev == dev;
  *target = read_link("/proc/self/fd/" + std::to_string(fd));
  ::close(fd);
  return on_dev && !target->empty() && under(*target, root);
}

std::string comm_of(const std::string& proc) {
  std::ifstream in(proc + "/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}

}  // namespace

std::vector<BusyProcess> find_busy_processes(const std::string& root, dev_t dev, pid_t except) {
  std::vector<BusyProcess> out;
  DIR* procs = ::opendir("/proc");
  if (!procs) return out;
  while (struct dirent* e = ::readdir(procs)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == except) continue;
    const std::string proc = std::string("/proc/") + e->d_name;
    std::string target;
    std::string where;
    if (reaches(proc + "/cwd", root, dev, &target)) {
      where = "cwd";
    } else if (reaches(proc + "/root", root, dev, &target)) {
      where = "root";
    }
    if (where.empty()) {
      if (DIR* fds = ::opendir((proc + "/fd").c_str())) {
        while (struct dirent* f = ::readdir(fds)) {
          if (f->d_name[0] == '.') continue;
          if (reaches(proc + "/fd/" + f->d_name, root, dev, &target)) {
            where = std::string("fd ") + f->d_name + " (" + target + ")";
            break;
          }
        }
        ::closedir(fds);
      }
    }
    if (where.empty()) {
      // address perms offset major:minor inode path
      std::ifstream maps(proc + "/maps");
      std::string line;
      while (std::getline(maps, line)) {
        const size_t slash = line.find('/');
        if (slash == std::string::npos) continue;
        std::istringstream fields(line);
        std::string addr, perms, offset, devstr;
        fields >> addr >> perms >> offset >> devstr;
        std::string path = line.substr(slash);
        if (path.ends_with(" (deleted)")) path.resize(path.size() - 10);
        const size_t colon = devstr.find(':');
        if (colon == std::string::npos || !under(path, root)) continue;
        const unsigned major = std::strtoul(devstr.substr(0, colon).c_str(), nullptr, 16);
        const unsigned minor = std::strtoul(devstr.substr(colon + 1).c_str(), nullptr, 16);
        if (makedev(major, minor) == dev) {
          where = "mapping (" + path + ")";
          break;
        }
      }
    }
    if (!where.empty()) {
      out.push_back(BusyProcess{static_cast<pid_t>(pid), comm_of(proc), where});
    }
  }
  ::closedir(procs);
  return out;
}

std::string describe_busy(const std::vector<BusyProcess>& busy, size_t limit) {
  std::string out;
  for (size_t i = 0; i < busy.size() && i < limit; ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(busy[i].pid) + " (" + busy[i].command + ": " + busy[i].where + ")";
  }
  if (busy.size() > limit) out += " and " + std::to_string(busy.size() - limit) + " more";
  return out;
}

}  // namespace leasefs::daemon

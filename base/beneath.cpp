#include "base/beneath.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace leasefs::journal {

namespace {

int openat2_beneath(int dir, const char* path, int flags) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  return static_cast<int>(::syscall(SYS_openat2, dir, path, &how, sizeof how));
}

}  // namespace

base::UniqueFd open_parent(int root_fd, std::string_view path, std::string* name) {
  const size_t slash = path.rfind('/');
  std::string parent = slash == std::string_view::npos ? "." : std::string(path.substr(0, slash));
  *name = std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
  return base::UniqueFd(openat2_beneath(root_fd, parent.c_str(), O_PATH | O_DIRECTORY));
}

base::UniqueFd open_beneath(int root_fd, std::string_view path, int flags) {
  std::string name;
  base::UniqueFd parent = open_parent(root_fd, path, &name);
  if (!parent) return parent;
  return base::UniqueFd(::openat(parent.get(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
}

bool journaled_path(std::string_view path) noexcept {
  if (path.empty() || path.front() == '/' || path.size() >= 4096) return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (start == 0 && part == ".longrun") return false;
    start = end + 1;
  }
  return true;
}

bool path_within(std::string_view path, std::string_view prefix) noexcept {
  if (prefix.empty()) return true;
  return path == prefix ||
         (path.size() > prefix.size() && path.starts_with(prefix) && path[prefix.size()] == '/');
}

}  // namespace leasefs::journal

#include "base/beneath.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace leasefs::base {

namespace {

int openat2_beneath(int dir, const char* path, int flags) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  return static_cast<int>(::syscall(SYS_openat2, dir, path, &how, sizeof how));
}

}  // namespace

UniqueFd open_parent(int root_fd, std::string_view path, std::string* name) {
  const size_t slash = path.rfind('/');
  std::string parent = slash == std::string_view::npos ? "." : std::string(path.substr(0, slash));
  *name = std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
  return UniqueFd(openat2_beneath(root_fd, parent.c_str(), O_PATH | O_DIRECTORY));
}

UniqueFd open_beneath(int root_fd, std::string_view path, int flags) {
  std::string name;
  UniqueFd parent = open_parent(root_fd, path, &name);
  if (!parent) return parent;
  return UniqueFd(::openat(parent.get(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
}

}  // namespace leasefs::base

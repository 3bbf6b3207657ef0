#include "base/tree_at.hpp"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace leasefs::base {

namespace {

// The entries of the directory `name` in `parent_fd` (opened without following
// a link), and its descriptor in `*dir_fd`; false when it is not a directory.
bool list_dir(int parent_fd, const char* name, int* dir_fd, std::vector<std::string>* names) {
  const int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  DIR* d = ::fdopendir(::dup(fd));
  if (!d) {
    ::close(fd);
    return false;
  }
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      names->emplace_back(e->d_name);
    }
  }
  ::closedir(d);
  *dir_fd = fd;
  return true;
}

}  // namespace

uint64_t tree_bytes_at(int parent_fd, const char* name) noexcept {
  try {
    struct stat st {};
    if (::fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
    uint64_t total = static_cast<uint64_t>(st.st_blocks) * 512;
    if (!S_ISDIR(st.st_mode)) return total;
    int fd = -1;
    std::vector<std::string> names;
    if (!list_dir(parent_fd, name, &fd, &names)) return total;
    for (const auto& n : names) total += tree_bytes_at(fd, n.c_str());
    ::close(fd);
    return total;
  } catch (...) {
    return 0;
  }
}

int remove_tree_at(int parent_fd, const char* name) noexcept {
  try {
    if (::unlinkat(parent_fd, name, 0) == 0) return 0;
    if (errno == ENOENT) return 0;
    if (errno != EISDIR && errno != EPERM) return -errno;
    int fd = -1;
    std::vector<std::string> names;
    if (!list_dir(parent_fd, name, &fd, &names)) return -errno;
    int first = 0;
    for (const auto& n : names) {
      if (int r = remove_tree_at(fd, n.c_str()); r < 0 && first == 0) first = r;
    }
    ::close(fd);
    if (::unlinkat(parent_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT && first == 0) {
      first = -errno;
    }
    return first;
  } catch (...) {
    return -ENOMEM;
  }
}

}  // namespace leasefs::base

#include "fuse/longrun_identity.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <string>

namespace leasefs::fuse {

bool LongrunIdentity::longrun_dir(dev_t* dev, ino_t* ino) const {
  if (!known_.load(std::memory_order_acquire)) {
    struct stat st {};
    if (::fstatat(root_fd_, ".longrun", &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
      return false;
    }
    dev_.store(st.st_dev, std::memory_order_relaxed);
    ino_.store(st.st_ino, std::memory_order_relaxed);
    known_.store(true, std::memory_order_release);
  }
  *dev = static_cast<dev_t>(dev_.load(std::memory_order_relaxed));
  *ino = static_cast<ino_t>(ino_.load(std::memory_order_relaxed));
  return true;
}

bool LongrunIdentity::protects(const struct stat& st) const {
  dev_t dev = 0;
  ino_t ino = 0;
  if (S_ISDIR(st.st_mode)) {
    return longrun_dir(&dev, &ino) && st.st_dev == dev && st.st_ino == ino;
  }
  // A file with a single name is .longrun's only if reached through .longrun,
  // which the name check already covers.
  if (st.st_nlink <= 1 || !longrun_dir(&dev, &ino) || st.st_dev != dev) return false;
  // Breadth-first over .longrun, one directory descriptor at a time.
  int top = ::openat(root_fd_, ".longrun", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (top < 0) return false;
  std::deque<int> dirs{top};
  int seen = 0;
  bool found = false;
  while (!dirs.empty() && !found) {
    DIR* stream = ::fdopendir(dirs.front());
    dirs.pop_front();
    if (!stream) continue;
    while (dirent* ent = ::readdir(stream)) {
      if (std::strcmp(ent->d_name, ".") == 0 || std::strcmp(ent->d_name, "..") == 0) continue;
      if (++seen > kMaxScan) {
        found = true;  // cannot tell: fail closed
        break;
      }
      if (ent->d_ino == st.st_ino) {
        struct stat es {};
        if (::fstatat(::dirfd(stream), ent->d_name, &es, AT_SYMLINK_NOFOLLOW) == 0 &&
            es.st_dev == st.st_dev && es.st_ino == st.st_ino) {
          found = true;
          break;
        }
      }
      if (ent->d_type == DT_DIR) {
        int sub =
            ::openat(::dirfd(stream), ent->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) dirs.push_back(sub);
      }
    }
    ::closedir(stream);
  }
  for (int fd : dirs) ::close(fd);
  return found;
}

}  // namespace leasefs::fuse

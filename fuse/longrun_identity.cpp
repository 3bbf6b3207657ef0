#include "fuse/longrun_identity.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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
  return stable_ ? listed(st) : search(st);
}

bool LongrunIdentity::walk(const std::function<bool(int, const dirent&)>& visit) const {
  int top = ::openat(root_fd_, ".longrun", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (top < 0) return false;
  std::deque<int> dirs{top};
  bool whole = true;
  bool stopped = false;
  while (!dirs.empty() && !stopped) {
    DIR* stream = ::fdopendir(dirs.front());
    dirs.pop_front();
    if (!stream) {
      whole = false;
      continue;
    }
    errno = 0;
    while (dirent* ent = ::readdir(stream)) {
      if (std::strcmp(ent->d_name, ".") == 0 || std::strcmp(ent->d_name, "..") == 0) continue;
      if (!visit(::dirfd(stream), *ent)) {
        stopped = true;
        break;
      }
      if (ent->d_type == DT_DIR) {
        int sub =
            ::openat(::dirfd(stream), ent->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
          dirs.push_back(sub);
        } else {
          whole = false;
        }
      }
      errno = 0;
    }
    if (errno != 0) whole = false;  // readdir failed before the end
    ::closedir(stream);
  }
  for (int fd : dirs) ::close(fd);
  return whole && !stopped;
}

bool LongrunIdentity::search(const struct stat& st) const {
  int seen = 0;
  bool found = false;
  walk([&](int dir_fd, const dirent& ent) {
    if (++seen > kMaxScan) {
      found = true;  // cannot tell: fail closed
      return false;
    }
    if (ent.d_ino != st.st_ino) return true;
    struct stat es {};
    found = ::fstatat(dir_fd, ent.d_name, &es, AT_SYMLINK_NOFOLLOW) == 0 &&
            es.st_dev == st.st_dev && es.st_ino == st.st_ino;
    return !found;
  });
  return found;
}

bool LongrunIdentity::listed(const struct stat& st) const {
  std::lock_guard lock(list_mu_);
  if (!list_taken_) {
    std::vector<Key> linked;
    bool whole = walk([&](int dir_fd, const dirent& ent) {
      if (ent.d_type == DT_DIR) return true;
      struct stat es {};
      if (::fstatat(dir_fd, ent.d_name, &es, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(es.st_mode)) {
        return false;  // unreadable, or a directory the walk would not enter: not whole
      }
      if (es.st_nlink > 1) linked.emplace_back(es.st_dev, es.st_ino);
      return true;
    });
    // A list with a hole in it cannot say "not .longrun's": search this time,
    // and list again next time.
    if (!whole) return search(st);
    std::sort(linked.begin(), linked.end());
    linked_ = std::move(linked);
    list_taken_ = true;
  }
  return std::binary_search(
      linked_.begin(), linked_.end(),
      Key{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)});
}

}  // namespace leasefs::fuse

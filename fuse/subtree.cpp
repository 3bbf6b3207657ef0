#include "fuse/subtree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <string>

#include "base/unique_fd.hpp"

namespace leasefs::fuse {

namespace {

int open_beneath(int dirfd, const std::string& rel) {
  open_how how{};
  how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof how));
}

}  // namespace

gate::Subtree list_subtree(int parent_fd, const char* name, size_t prefix_len) {
  gate::Subtree out;
  base::UniqueFd top(::openat(parent_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!top) return out;  // incomplete: not a directory we could open
  struct Pending {
    std::string rel;  // "" for the top itself
    size_t depth;
  };
  std::deque<Pending> queue{{"", 0}};
  while (!queue.empty()) {
    Pending dir = std::move(queue.front());
    queue.pop_front();
    base::UniqueFd fd(open_beneath(top.get(), dir.rel.empty() ? "." : dir.rel));
    if (!fd) return out;
    DIR* stream = ::fdopendir(fd.get());
    if (!stream) return out;
    (void)fd.release();  // owned by the stream now
    bool ok = true;
    while (dirent* ent = ::readdir(stream)) {
      if (std::strcmp(ent->d_name, ".") == 0 || std::strcmp(ent->d_name, "..") == 0) continue;
      std::string rel = dir.rel.empty() ? std::string(ent->d_name) : dir.rel + '/' + ent->d_name;
      if (out.entries.size() >= kMaxSubtreeEntries ||
          prefix_len + 1 + rel.size() >= gate::kMaxPathLength) {
        ok = false;
        break;
      }
      unsigned char type = ent->d_type;
      if (type == DT_UNKNOWN) {
        struct stat st {};
        if (::fstatat(::dirfd(stream), ent->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
          ok = false;
          break;
        }
        type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
      }
      if (type == DT_DIR) {
        if (dir.depth + 1 >= kMaxSubtreeDepth) {
          ok = false;
          break;
        }
        queue.push_back({rel, dir.depth + 1});
      }
      out.entries.push_back(std::move(rel));
    }
    ::closedir(stream);
    if (!ok) return out;
  }
  out.complete = true;
  return out;
}

}  // namespace leasefs::fuse

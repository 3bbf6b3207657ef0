#include "control/orphan_sockets.hpp"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "base/unique_fd.hpp"

namespace leasefs::control {

namespace {

bool group_exists(gid_t gid) {
  group entry{};
  group* found = nullptr;
  std::vector<char> buffer(16384);
  while (true) {
    const int err = ::getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found);
    if (err == ERANGE && buffer.size() < (1u << 20)) {
      buffer.resize(buffer.size() * 2);
      continue;
    }
    // An error other than "no such group" keeps the file: only a sure orphan goes.
    return err != 0 || found != nullptr;
  }
}

bool nobody_answers(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  base::UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe) return false;
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
    return false;
  }
  return errno == ECONNREFUSED;
}

}  // namespace

int remove_orphaned_sockets(const std::string& dir) noexcept {
  try {
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
    if (!d) return 0;
    int removed = 0;
    while (const dirent* e = ::readdir(d.get())) {
      if (e->d_type != DT_SOCK && e->d_type != DT_UNKNOWN) continue;
      const std::string path = dir + "/" + e->d_name;
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
      if (group_exists(st.st_gid) || !nobody_answers(path)) continue;
      if (::unlink(path.c_str()) == 0) {
        ++removed;
        spdlog::info(
            "control: removed {}, left by a daemon that died, of group {} that no "
            "longer exists",
            path, st.st_gid);
      }
    }
    return removed;
  } catch (...) {
    return 0;  // allocation failure: the sweep is a courtesy, never a reason not to start
  }
}

}  // namespace leasefs::control

// `leasefs forget ROOT`: what leasefs keeps under ROOT/.longrun once no daemon
// serves it. By default the parts that are only for a running daemon or for undo
// go (the journal, the disk reserve's ballast, status.md, the lock); the record
// of what was asked, granted and done stays (audit and its signed heads, memory
// and ledger, state, the log). `--all` removes .longrun whole.
//
// The tree is not mounted, so the agent may have written anything in ROOT: .longrun
// is opened without following a link and must be a directory of root's, and
// everything beneath is removed through descriptors (base/tree_at.hpp). Its lock is
// held throughout, so no daemon starts on ROOT meanwhile.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/tree_at.hpp"
#include "base/unique_fd.hpp"
#include "daemon/cli.hpp"
#include "daemon/mount_table.hpp"

namespace leasefs::daemon {

namespace {

// What goes without --all, and why a person can let it go.
struct Disposable {
  const char* name;
  const char* why;
};
constexpr Disposable kDisposable[] = {
    {"journal", "what `leasectl diff` and `undo` read: no turn can be undone after this"},
    {"reserve", "the disk reserve's ballast, made again at the next mount"},
    {"status.md", "written again at the next mount"},
    {"lock", "made again at the next mount"},
};

std::string size_text(uint64_t bytes) {
  char buf[32];
  if (bytes >= (uint64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  }
  return buf;
}

std::vector<std::string> entries(int dir_fd) {
  std::vector<std::string> names;
  base::UniqueFd copy(::dup(dir_fd));
  DIR* d = copy ? ::fdopendir(copy.release()) : nullptr;
  if (!d) return names;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      names.emplace_back(e->d_name);
    }
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "leasefs forget: %s\n", message.c_str());
  return 1;
}

}  // namespace

int run_forget(const ForgetCommand& cmd) {
  char real[PATH_MAX];
  if (!::realpath(cmd.root.c_str(), real)) {
    return fail("cannot find " + cmd.root + ": " + std::strerror(errno));
  }
  const std::string root = real;
  if (leasefs_mount_at(root)) {
    return fail(root + " is mounted; stop its daemon with `leasefs unmount " + root + "` first");
  }
  base::UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd) return fail("cannot open " + root + ": " + std::strerror(errno));
  const std::string where = root + "/.longrun";
  base::UniqueFd dir(
      ::openat(root_fd.get(), ".longrun", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) {
    if (errno == ENOENT) {
      std::printf("leasefs forget: %s has no .longrun: nothing to forget\n", root.c_str());
      return 0;
    }
    return fail("cannot open " + where + " (" + std::strerror(errno) +
                "): it is not leasefs's directory; nothing removed");
  }
  struct stat st {};
  if (::fstat(dir.get(), &st) != 0 || st.st_uid != 0) {
    return fail(where + " belongs to uid " + std::to_string(st.st_uid) +
                ", not root: leasefs did not make it; nothing removed");
  }
  base::UniqueFd lock(::openat(dir.get(), "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock) return fail("cannot open " + where + "/lock: " + std::strerror(errno));
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    return fail(root + " is served by a leasefs daemon (it holds " + where +
                "/lock); stop it with `leasefs unmount` first");
  }

  const char* verb = cmd.dry_run ? "would remove" : "removed";
  std::printf("leasefs forget: %s%s\n", where.c_str(), cmd.dry_run ? " (dry run)" : "");
  int failures = 0;
  auto remove = [&](const std::string& name, const char* why) {
    const uint64_t bytes = base::tree_bytes_at(dir.get(), name.c_str());
    if (!cmd.dry_run) {
      if (int r = base::remove_tree_at(dir.get(), name.c_str()); r < 0) {
        std::fprintf(stderr, "leasefs forget: cannot remove %s/%s: %s\n", where.c_str(),
                     name.c_str(), std::strerror(-r));
        ++failures;
        return;
      }
    }
    std::printf("  %-12s %-12s %10s  %s\n", verb, name.c_str(), size_text(bytes).c_str(), why);
  };
  std::vector<std::string> kept;
  for (const std::string& name : entries(dir.get())) {
    const auto* d = std::find_if(std::begin(kDisposable), std::end(kDisposable),
                                 [&](const Disposable& x) { return name == x.name; });
    if (d != std::end(kDisposable)) {
      remove(name, d->why);
    } else if (cmd.all) {
      remove(name, "part of the record");
    } else {
      kept.push_back(name);
    }
  }
  if (!kept.empty()) {
    std::string list;
    uint64_t bytes = 0;
    for (const auto& k : kept) {
      list += (list.empty() ? "" : ", ") + k;
      bytes += base::tree_bytes_at(dir.get(), k.c_str());
    }
    std::printf(
        "  %-12s %s (%s): the record of what was asked, granted and done; `leasefs "
        "forget --all` removes it too\n",
        "kept", list.c_str(), size_text(bytes).c_str());
  } else if (cmd.all && !cmd.dry_run && failures == 0) {
    // Only if the name still is the directory emptied (the agent may have moved it).
    struct stat now {};
    if (::fstatat(root_fd.get(), ".longrun", &now, AT_SYMLINK_NOFOLLOW) == 0 &&
        now.st_dev == st.st_dev && now.st_ino == st.st_ino) {
      lock.reset();
      if (::unlinkat(root_fd.get(), ".longrun", AT_REMOVEDIR) != 0) {
        return fail("cannot remove " + where + ": " + std::strerror(errno));
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace leasefs::daemon

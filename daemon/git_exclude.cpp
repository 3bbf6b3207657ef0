#include "daemon/git_exclude.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "base/unique_fd.hpp"

namespace leasefs::daemon {

namespace {

constexpr const char* kPattern = "/.longrun/";

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  return text;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string could_not(const std::string& why) {
  return "Could not add " + std::string(kPattern) + " to the repository's .git/info/exclude (" +
         why + "): add it yourself, or a leased `git add -A` stages leasefs's state.";
}

}  // namespace

// The daemon runs as root and the agent owns the tree: only a `.git` directory
// in the root is written, reached one name at a time without following a
// symlink, so no name the agent plants leads the write out of the tree. A linked
// work tree (`.git` a file naming another directory) is left to the person.
std::optional<std::string> exclude_longrun_from_git(int root_fd) {
  base::UniqueFd git(::openat(root_fd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!git) {
    struct stat st {};
    if (::fstatat(root_fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
      return could_not("this is a linked work tree; leasefs writes only a .git directory");
    }
    return std::nullopt;
  }
  struct stat git_st {};
  if (::fstat(git.get(), &git_st) != 0) return could_not(std::strerror(errno));
  if (::mkdirat(git.get(), "info", 0755) == 0) {
    (void)::fchownat(git.get(), "info", git_st.st_uid, git_st.st_gid, AT_SYMLINK_NOFOLLOW);
  }
  base::UniqueFd info(::openat(git.get(), "info", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!info) return could_not(std::strerror(errno));
  // Appended, never rewritten: what people put there stays as it was.
  base::UniqueFd fd(::openat(info.get(), "exclude",
                             O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                             0644));
  if (!fd) return could_not(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return could_not("not a regular file");
  std::istringstream lines(read_all(fd.get()));
  for (std::string line; std::getline(lines, line);) {
    line = trim(line);
    if (line == kPattern || line == ".longrun/" || line == ".longrun" || line == "/.longrun") {
      return std::nullopt;
    }
  }
  std::string text =
      "# leasefs: state, memory, ledger and audit of this root\n" + std::string(kPattern) + "\n";
  if (st.st_size == 0) (void)::fchown(fd.get(), git_st.st_uid, git_st.st_gid);
  char last = '\n';
  if (st.st_size > 0 && ::pread(fd.get(), &last, 1, st.st_size - 1) == 1 && last != '\n') {
    text = "\n" + text;
  }
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    return could_not(std::strerror(errno));
  }
  return "Added " + std::string(kPattern) +
         " to the repository's .git/info/exclude, so git leaves leasefs's state out of commits.";
}

}  // namespace leasefs::daemon

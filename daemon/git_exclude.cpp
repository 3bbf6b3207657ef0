#include "daemon/git_exclude.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace leasefs::daemon {

namespace {

constexpr const char* kPattern = "/.longrun/";

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// The directory holding info/exclude: .git itself, or for a linked work tree
// (.git is a file "gitdir: X") the common directory of X.
std::optional<std::string> git_dir(const std::string& root) {
  const std::string dot_git = root + "/.git";
  struct stat st {};
  if (::lstat(dot_git.c_str(), &st) != 0) return std::nullopt;
  if (S_ISDIR(st.st_mode)) return dot_git;
  if (!S_ISREG(st.st_mode)) return std::nullopt;
  std::string text = trim(read_all(dot_git));
  if (text.rfind("gitdir: ", 0) != 0) return std::nullopt;
  std::string dir = text.substr(8);
  if (dir.empty()) return std::nullopt;
  if (dir[0] != '/') dir = root + "/" + dir;
  const std::string common = trim(read_all(dir + "/commondir"));
  if (!common.empty()) return common[0] == '/' ? common : dir + "/" + common;
  return dir;
}

std::string could_not(const std::string& why) {
  return "Could not add " + std::string(kPattern) + " to the repository's .git/info/exclude (" +
         why + "): add it yourself, or a leased `git add -A` stages leasefs's state.";
}

}  // namespace

std::optional<std::string> exclude_longrun_from_git(int root_fd) {
  const std::string root = "/proc/self/fd/" + std::to_string(root_fd);
  auto dir = git_dir(root);
  if (!dir) return std::nullopt;
  const std::string info = *dir + "/info";
  const std::string exclude = info + "/exclude";
  std::istringstream lines(read_all(exclude));
  for (std::string line; std::getline(lines, line);) {
    line = trim(line);
    if (line == kPattern || line == ".longrun/" || line == ".longrun" || line == "/.longrun") {
      return std::nullopt;
    }
  }
  struct stat git_st {};
  ::stat(dir->c_str(), &git_st);
  if (::mkdir(info.c_str(), 0755) == 0) {
    (void)::chown(info.c_str(), git_st.st_uid, git_st.st_gid);
  }
  // Appended, never rewritten: what people put there stays as it was.
  const int fd =
      ::open(exclude.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return could_not(std::strerror(errno));
  struct stat st {};
  std::string text =
      "# leasefs: state, memory, ledger and audit of this root\n" + std::string(kPattern) + "\n";
  if (::fstat(fd, &st) == 0) {
    if (st.st_size == 0) (void)::fchown(fd, git_st.st_uid, git_st.st_gid);
    char last = '\n';
    if (st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') {
      text = "\n" + text;
    }
  }
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) return could_not(std::strerror(errno));
  return "Added " + std::string(kPattern) +
         " to the repository's .git/info/exclude, so git leaves leasefs's state out of commits.";
}

}  // namespace leasefs::daemon

// POSIX parity under a lease: the same sequence of operations, run by a second
// uid on a plain directory and through the mount (unscoped lease), gives the same
// result or errno at every step and the same final tree. The model is mergerfs's
// tests/TEST_posix_*: compare with the file system underneath, not with a table.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <sstream>

#include "tests/security/fileplane_support.hpp"

namespace leasefs::test::fileplane {
namespace {

struct Step {
  const char* name;
  std::function<int(const std::string&)> fn;  // gets "<dir>/"; returns 0 or errno
};

int create(const std::string& p, int flags) {
  int fd = ::open(p.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

int write_at(const std::string& p, const char* text, int flags) {
  int fd = ::open(p.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int rc = err_of(::write(fd, text, std::strlen(text)));
  ::close(fd);
  return rc;
}

// Whether the mtime of `p` is from `since` or later, or an errno, as text.
std::string stamped_since(const std::string& p, time_t since) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return "errno " + std::to_string(errno);
  return st.st_mtim.tv_sec >= since ? "this run" : "earlier";
}

// 0 when `change` moves the ctime of `p` forward, EAGAIN when it leaves it, or
// the errno of the change. The pause lets the file system's clock tick.
int touches_ctime(const std::string& p, const std::function<int()>& change) {
  struct stat before {};
  if (::lstat(p.c_str(), &before) != 0) return errno;
  ::usleep(20'000);
  if (int rc = change(); rc != 0) return rc;
  struct stat after {};
  if (::lstat(p.c_str(), &after) != 0) return errno;
  const bool later = after.st_ctim.tv_sec != before.st_ctim.tv_sec ||
                     after.st_ctim.tv_nsec != before.st_ctim.tv_nsec;
  return later ? 0 : EAGAIN;
}

// lstat's mtime, or an errno, as text.
std::string mtime_of(const std::string& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return "errno " + std::to_string(errno);
  return std::to_string(st.st_mtim.tv_sec);
}

const std::vector<Step> kSteps = {
    {"create", [](const std::string& d) { return create(d + "a", O_CREAT | O_WRONLY); }},
    {"create_excl_existing",
     [](const std::string& d) { return create(d + "a", O_CREAT | O_EXCL | O_WRONLY); }},
    {"write", [](const std::string& d) { return write_at(d + "a", "hello world\n", O_WRONLY); }},
    {"append",
     [](const std::string& d) { return write_at(d + "a", "more\n", O_WRONLY | O_APPEND); }},
    {"truncate", [](const std::string& d) { return err_of(::truncate((d + "a").c_str(), 5)); }},
    {"truncate_missing",
     [](const std::string& d) { return err_of(::truncate((d + "nope").c_str(), 5)); }},
    {"chmod", [](const std::string& d) { return err_of(::chmod((d + "a").c_str(), 0640)); }},
    {"chown_nothing_touches_ctime",  // chown(f, -1, -1): ctime as natively (pjdfstest chown/00)
     [](const std::string& d) {
       return touches_ctime(d + "a", [&] { return err_of(::chown((d + "a").c_str(), -1, -1)); });
     }},
    {"rename_touches_ctime",
     [](const std::string& d) {
       return touches_ctime(d + "a", [&] {
         if (::rename((d + "a").c_str(), (d + "a2").c_str()) != 0) return errno;
         return err_of(::rename((d + "a2").c_str(), (d + "a").c_str()));
       });
     }},
    {"chown_other", [](const std::string& d) { return err_of(::chown((d + "a").c_str(), 0, 0)); }},
    {"mkdir", [](const std::string& d) { return err_of(::mkdir((d + "dir").c_str(), 0755)); }},
    {"mkdir_existing",
     [](const std::string& d) { return err_of(::mkdir((d + "dir").c_str(), 0755)); }},
    {"create_in_dir",
     [](const std::string& d) { return create(d + "dir/inner", O_CREAT | O_WRONLY); }},
    {"rmdir_nonempty", [](const std::string& d) { return err_of(::rmdir((d + "dir").c_str())); }},
    {"rmdir_file", [](const std::string& d) { return err_of(::rmdir((d + "a").c_str())); }},
    {"unlink_dir", [](const std::string& d) { return err_of(::unlink((d + "dir").c_str())); }},
    {"link",
     [](const std::string& d) { return err_of(::link((d + "a").c_str(), (d + "b").c_str())); }},
    {"link_existing",
     [](const std::string& d) { return err_of(::link((d + "a").c_str(), (d + "b").c_str())); }},
    {"link_dir",
     [](const std::string& d) { return err_of(::link((d + "dir").c_str(), (d + "dl").c_str())); }},
    {"symlink", [](const std::string& d) { return err_of(::symlink("a", (d + "s").c_str())); }},
    {"symlink_existing",
     [](const std::string& d) { return err_of(::symlink("x", (d + "s").c_str())); }},
    {"dangling_symlink",
     [](const std::string& d) { return err_of(::symlink("missing", (d + "dangle").c_str())); }},
    {"utimensat_symlink_nofollow",
     [](const std::string& d) {
       struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
       return err_of(::utimensat(AT_FDCWD, (d + "s").c_str(), ts, AT_SYMLINK_NOFOLLOW));
     }},
    {"utimensat_dangling_nofollow",
     [](const std::string& d) {
       struct timespec ts[2] = {{1100000000, 0}, {1100000000, 0}};
       return err_of(::utimensat(AT_FDCWD, (d + "dangle").c_str(), ts, AT_SYMLINK_NOFOLLOW));
     }},
    {"utimensat_file",
     [](const std::string& d) {
       struct timespec ts[2] = {{1200000000, 0}, {1200000000, 0}};
       return err_of(::utimensat(AT_FDCWD, (d + "a").c_str(), ts, 0));
     }},
    {"rename",
     [](const std::string& d) { return err_of(::rename((d + "b").c_str(), (d + "c").c_str())); }},
    {"rename_over_file",
     [](const std::string& d) { return err_of(::rename((d + "c").c_str(), (d + "a").c_str())); }},
    {"rename_file_over_dir",
     [](const std::string& d) { return err_of(::rename((d + "a").c_str(), (d + "dir").c_str())); }},
    {"rename_dir_into_itself",
     [](const std::string& d) {
       return err_of(::rename((d + "dir").c_str(), (d + "dir/sub").c_str()));
     }},
    {"rename_noreplace_existing",
     [](const std::string& d) {
       return err_of(
           ::renameat2(AT_FDCWD, (d + "a").c_str(), AT_FDCWD, (d + "s").c_str(), RENAME_NOREPLACE));
     }},
    {"rename_exchange",
     [](const std::string& d) {
       return err_of(::renameat2(AT_FDCWD, (d + "a").c_str(), AT_FDCWD, (d + "dir").c_str(),
                                 RENAME_EXCHANGE));
     }},
    {"rename_exchange_back",
     [](const std::string& d) {
       return err_of(::renameat2(AT_FDCWD, (d + "a").c_str(), AT_FDCWD, (d + "dir").c_str(),
                                 RENAME_EXCHANGE));
     }},
    {"rename_missing",
     [](const std::string& d) {
       return err_of(::rename((d + "nope").c_str(), (d + "x").c_str()));
     }},
    {"mkfifo", [](const std::string& d) { return err_of(::mkfifo((d + "fifo").c_str(), 0600)); }},
    {"setxattr",
     [](const std::string& d) {
       return err_of(::setxattr((d + "a").c_str(), "user.k", "v", 1, 0));
     }},
    {"setxattr_create_existing",
     [](const std::string& d) {
       return err_of(::setxattr((d + "a").c_str(), "user.k", "w", 1, XATTR_CREATE));
     }},
    {"removexattr_missing",
     [](const std::string& d) { return err_of(::removexattr((d + "a").c_str(), "user.none")); }},
    {"open_trunc",
     [](const std::string& d) { return write_at(d + "a", "new\n", O_WRONLY | O_TRUNC); }},
    {"open_dir_for_write", [](const std::string& d) { return create(d + "dir", O_WRONLY); }},
    {"unlink", [](const std::string& d) { return err_of(::unlink((d + "dir/inner").c_str())); }},
    {"unlink_missing",
     [](const std::string& d) { return err_of(::unlink((d + "dir/inner").c_str())); }},
    {"rmdir", [](const std::string& d) { return err_of(::rmdir((d + "dir").c_str())); }},
};

// Runs every step as the agent's uid in a child; returns one line per step.
std::string run_steps(const std::string& dir) {
  int out[2];
  if (::pipe(out) != 0) return "pipe failed";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(out[0]);
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
        ::setresuid(kAgent, kAgent, kAgent) != 0) {
      ::_exit(254);
    }
    ::umask(022);
    std::ostringstream lines;
    const std::string d = dir + "/";
    // The last write stamps `a` with the clock: compare when, not the second.
    const time_t started = ::time(nullptr);
    for (const auto& step : kSteps) {
      const int rc = step.fn(d);
      lines << step.name << " = "
            << (rc == 0 ? std::string("ok") : std::string(strerrorname_np(rc))) << "\n";
    }
    lines << "mtime s " << mtime_of(d + "s") << "\nmtime dangle " << mtime_of(d + "dangle")
          << "\nmtime a " << stamped_since(d + "a", started) << "\n";
    const std::string text = lines.str();
    (void)!::write(out[1], text.data(), text.size());
    ::_exit(0);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return text;
}

TEST(PosixParity, SameResultsErrnosAndTreeAsAPlainDirectory) {
  const std::string native = make_temp_dir("leasefs-parity-");
  ASSERT_EQ(::chown(native.c_str(), kAgent, 65534), 0);
  ASSERT_EQ(::chmod(native.c_str(), 0755), 0);
  const std::string expected = run_steps(native);
  const std::string expected_tree = tree_digest(native);
  remove_tree(native);
  ASSERT_NE(expected.find("rmdir_nonempty = ENOTEMPTY"), std::string::npos) << expected;

  MountedFs fs;
  ASSERT_EQ(::chown(fs.backing().c_str(), kAgent, 65534), 0);
  fs.grant();
  const std::string through = run_steps(fs.mnt());
  EXPECT_EQ(through, expected);
  EXPECT_EQ(tree_digest(fs.backing()), expected_tree);
}

}  // namespace
}  // namespace leasefs::test::fileplane

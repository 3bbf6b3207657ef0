// Setuid and setgid bits drop on content changes as on the file system underneath
// (ext4 here). Without FUSE_HANDLE_KILLPRIV_V2 the kernel leaves truncate,
// fallocate and copy_file_range to the daemon, which performs them as root; a
// world-writable setuid file kept 6777 through the mount after the agent changed
// its content. Each content change is made by the agent's uid (no capabilities,
// in or out of the file's group) and by root (CAP_FSETID) on a plain directory
// and through the mount (with an unscoped lease, so the gate refuses nothing),
// and the modes must be the same.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>
#include <optional>
#include <sstream>

#include "tests/security/fileplane_support.hpp"

namespace leasefs::test::fileplane {
namespace {

struct Change {
  const char* name;
  std::function<int(const std::string& file, const std::string& source)> run;
};

int on_fd(const std::string& file, int flags, const std::function<int(int)>& fn) {
  int fd = ::open(file.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return errno;
  int rc = fn(fd);
  ::close(fd);
  return rc;
}

const Change kChanges[] = {
    {"truncate",
     [](const std::string& f, const std::string&) { return err_of(::truncate(f.c_str(), 100)); }},
    {"ftruncate",
     [](const std::string& f, const std::string&) {
       return on_fd(f, O_WRONLY, [](int fd) { return err_of(::ftruncate(fd, 100)); });
     }},
    {"open O_TRUNC",
     [](const std::string& f, const std::string&) {
       return on_fd(f, O_WRONLY | O_TRUNC, [](int) { return 0; });
     }},
    {"fallocate",
     [](const std::string& f, const std::string&) {
       return on_fd(f, O_WRONLY, [](int fd) { return err_of(::fallocate(fd, 0, 0, 1 << 16)); });
     }},
    {"fallocate zero-range",
     [](const std::string& f, const std::string&) {
       return on_fd(f, O_WRONLY,
                    [](int fd) { return err_of(::fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 4096)); });
     }},
    {"fallocate punch-hole",
     [](const std::string& f, const std::string&) {
       return on_fd(f, O_WRONLY, [](int fd) {
         return err_of(::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096));
       });
     }},
    {"copy_file_range",
     [](const std::string& f, const std::string& src) {
       return on_fd(src, O_RDONLY, [&](int in) {
         return on_fd(f, O_WRONLY, [&](int out) {
           return err_of(::copy_file_range(in, nullptr, out, nullptr, 4096, 0));
         });
       });
     }},
    {"write",
     [](const std::string& f, const std::string&) {
       return on_fd(f, O_WRONLY, [](int fd) { return err_of(::write(fd, "x", 1)); });
     }},
};

// Who changes the content, and the file's group.
struct Actor {
  const char* name;
  std::optional<uid_t> uid;  // empty: root
  gid_t file_gid;            // 65534: the agent is in the file's group
};

const Actor kActors[] = {
    {"agent outside the group", kAgent, 0},
    {"agent in the group", kAgent, 65534},
    {"root", std::nullopt, 0},
};

const mode_t kModes[] = {06777, 04777, 02777, 02767, 06767};

// Makes `dir`/f (mode, owned by root:gid, 64 KiB) and `dir`/src, lets `actor`
// run `change`, and returns "errno mode".
std::string attempt(const std::string& dir, const Change& change, const Actor& actor, mode_t mode) {
  const std::string file = dir + "/f";
  const std::string src = dir + "/src";
  ::unlink(file.c_str());
  RunOptions o;
  RunResult made = run_sh("set -e; head -c 65536 /dev/urandom > '" + file + "'; echo data > '" +
                              src + "'; chmod 644 '" + src + "'",
                          o);
  if (!made.ok()) return "setup failed: " + made.output;
  if (::chown(file.c_str(), 0, actor.file_gid) != 0 || ::chmod(file.c_str(), mode) != 0) {
    return "setup failed: chown/chmod";
  }
  const int rc = as_agent([&] { return change.run(file, src); }, actor.uid);
  // The mode alone, as `stat -c %a` asks for it: the kernel answers from its
  // cache unless the mode was dropped from it.
  struct statx stx {};
  if (::statx(AT_FDCWD, file.c_str(), 0, STATX_MODE, &stx) != 0) return "statx failed";
  std::ostringstream out;
  out << rc << " " << std::oct << (stx.stx_mode & 07777);
  return out.str();
}

TEST(PrivilegeBits, DropOnContentChangesAsOnTheBackingFileSystem) {
  const std::string native = make_temp_dir("leasefs-killpriv-");
  ASSERT_EQ(::chmod(native.c_str(), 0777), 0);
  MountedFs fs;
  ASSERT_EQ(::chmod(fs.backing().c_str(), 0777), 0);
  fs.grant();
  int dropped_natively = 0;
  for (const Actor& actor : kActors) {
    for (const Change& change : kChanges) {
      for (mode_t mode : kModes) {
        SCOPED_TRACE(std::string(change.name) + " by " + actor.name + " on mode " + [&] {
          std::ostringstream m;
          m << std::oct << mode;
          return m.str();
        }());
        const std::string expected = attempt(native, change, actor, mode);
        ASSERT_EQ(expected.rfind("0 ", 0), 0u) << expected;
        std::ostringstream untouched;
        untouched << "0 " << std::oct << mode;
        if (expected != untouched.str()) ++dropped_natively;
        EXPECT_EQ(attempt(fs.mnt(), change, actor, mode), expected);
      }
    }
  }
  remove_tree(native);
  EXPECT_GT(dropped_natively, 0);  // the comparison means something here
}

}  // namespace
}  // namespace leasefs::test::fileplane

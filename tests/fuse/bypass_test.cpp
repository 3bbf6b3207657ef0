// Red-team tests: every way we could think of for an agent process (root or
// unprivileged) to change the backing tree through the mount without a valid
// lease, to escape a path-narrowed grant, or to touch .longrun/ even with a lease.
// Each attempt must be refused and leave the backing tree byte-for-byte unchanged.
//
// Seeded trees are world-writable (0777 dirs, 0666 files) so an unprivileged
// caller passes the kernel's own permission check (default_permissions): any
// refusal then comes from the gate.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/lockstep.hpp"
#include "tests/support/mounted_fs.hpp"

namespace leasefs::test {
namespace {

constexpr uid_t kNobody = 65534;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Seeds the backing tree directly (not through the mount).
void seed(const MountedFs& fs, const std::string& script) {
  RunOptions o;
  o.cwd = fs.backing();
  auto r = run_sh("set -e; umask 000; " + script, o);
  ASSERT_TRUE(r.ok()) << r.output;
}

// Runs `fn` in a forked child, as `uid` (gid 65534, no supplementary groups)
// when given. Returns what `fn` returned: 0 for success, an errno otherwise.
int in_child(std::optional<uid_t> uid, const std::function<int()>& fn) {
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (uid) {
      if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
          ::setresuid(*uid, *uid, *uid) != 0) {
        ::_exit(254);
      }
    }
    ::_exit(fn() & 0xff);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

// 0 when `rc` says success, errno otherwise.
int err_of(long rc) {
  return rc < 0 ? errno : 0;
}

constexpr int kAny = -1;  // the result does not matter; the tree check decides

struct Attempt {
  std::string name;
  std::function<int()> fn;  // 0 on success, errno on failure
  int expected = EACCES;    // the errno it must fail with, or kAny
};

// Runs every attempt as root and as nobody; each must fail with its errno.
void expect_all_refused(const std::vector<Attempt>& attempts, bool also_as_nobody = true) {
  for (const auto& a : attempts) {
    const int as_root = in_child(std::nullopt, a.fn);
    if (a.expected != kAny) {
      EXPECT_EQ(as_root, a.expected) << "root: " << a.name;
    }
    if (!also_as_nobody) continue;
    const int as_nobody = in_child(kNobody, a.fn);
    if (a.expected != kAny) {
      EXPECT_EQ(as_nobody, a.expected) << "nobody: " << a.name;
    }
  }
}

// ---------------------------------------------------------------------------
// No lease at all.
// ---------------------------------------------------------------------------

TEST(Bypass, NoLeaseOpenFlagsAndPathOps) {
  MountedFs fs;
  seed(fs,
       "chmod 777 .; echo original > f; chmod 666 f; chown 65534:65534 f; mkdir -m 777 d; echo in "
       "> d/g; chmod 666 d/g; "
       "mkdir -m 777 empty; ln -s f sl; mkfifo -m 666 fifo");
  fs.revoke();
  const std::string m = fs.mnt();
  const std::string f = m + "/f";
  const std::string before = tree_digest(fs.backing());

  std::vector<Attempt> attempts = {
      {"open O_RDONLY|O_TRUNC", [&] { return err_of(::open(f.c_str(), O_RDONLY | O_TRUNC)); }},
      {"open O_WRONLY", [&] { return err_of(::open(f.c_str(), O_WRONLY)); }},
      {"open O_RDWR", [&] { return err_of(::open(f.c_str(), O_RDWR)); }},
      {"open O_RDONLY|O_APPEND", [&] { return err_of(::open(f.c_str(), O_RDONLY | O_APPEND)); }},
      {"open O_WRONLY|O_DIRECT", [&] { return err_of(::open(f.c_str(), O_WRONLY | O_DIRECT)); }},
      {"creat existing", [&] { return err_of(::creat(f.c_str(), 0644)); }},
      {"open O_CREAT|O_EXCL existing",
       [&] { return err_of(::open(f.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644)); }, EEXIST},
      {"open O_CREAT new",
       [&] { return err_of(::open((m + "/new").c_str(), O_WRONLY | O_CREAT, 0644)); }},
      {"open O_TMPFILE", [&] { return ::open(m.c_str(), O_TMPFILE | O_RDWR, 0644) < 0 ? 0 : 1; },
       0},
      {"openat2 O_RDWR",
       [&] {
         open_how how{};
         how.flags = O_RDWR;
         return err_of(::syscall(SYS_openat2, AT_FDCWD, f.c_str(), &how, sizeof how));
       }},
      {"O_PATH then /proc/self/fd reopen O_WRONLY",
       [&] {
         int p = ::open(f.c_str(), O_PATH);
         if (p < 0) return 100;
         return err_of(::open(("/proc/self/fd/" + std::to_string(p)).c_str(), O_WRONLY));
       }},
      {"openat(O_PATH dir, name, O_WRONLY)",
       [&] {
         int d = ::open((m + "/d").c_str(), O_PATH | O_DIRECTORY);
         if (d < 0) return 100;
         return err_of(::openat(d, "g", O_WRONLY));
       }},
      {"write through symlink", [&] { return err_of(::open((m + "/sl").c_str(), O_WRONLY)); }},
      {"truncate(path)", [&] { return err_of(::truncate(f.c_str(), 0)); }},
      {"utimensat", [&] { return err_of(::utimensat(AT_FDCWD, f.c_str(), nullptr, 0)); }},
      {"utimensat explicit times",
       [&] {
         timespec ts[2] = {{1, 0}, {1, 0}};
         return err_of(::utimensat(AT_FDCWD, f.c_str(), ts, 0));
       }},
      {"chmod", [&] { return err_of(::chmod(f.c_str(), 0600)); }},
      {"setxattr file", [&] { return err_of(::setxattr(f.c_str(), "user.x", "1", 1, 0)); }},
      {"setxattr dir", [&] { return err_of(::setxattr((m + "/d").c_str(), "user.x", "1", 1, 0)); }},
      {"removexattr", [&] { return err_of(::removexattr(f.c_str(), "user.seeded")); }},
      {"rename", [&] { return err_of(::rename(f.c_str(), (m + "/f2").c_str())); }},
      {"rename over", [&] { return err_of(::rename(f.c_str(), (m + "/d/g").c_str())); }},
      {"RENAME_NOREPLACE",
       [&] {
         return err_of(
             ::renameat2(AT_FDCWD, f.c_str(), AT_FDCWD, (m + "/f3").c_str(), RENAME_NOREPLACE));
       }},
      {"RENAME_EXCHANGE",
       [&] {
         return err_of(
             ::renameat2(AT_FDCWD, f.c_str(), AT_FDCWD, (m + "/d/g").c_str(), RENAME_EXCHANGE));
       }},
      {"link", [&] { return err_of(::link(f.c_str(), (m + "/hard").c_str())); }},
      {"symlink", [&] { return err_of(::symlink("f", (m + "/sl2").c_str())); }},
      {"mkfifo", [&] { return err_of(::mkfifo((m + "/fifo2").c_str(), 0644)); }},
      {"mknod regular", [&] { return err_of(::mknod((m + "/node").c_str(), S_IFREG | 0644, 0)); }},
      {"mkdir", [&] { return err_of(::mkdir((m + "/d2").c_str(), 0755)); }},
      {"rmdir", [&] { return err_of(::rmdir((m + "/empty").c_str())); }},
      {"unlink", [&] { return err_of(::unlink(f.c_str())); }},
      {"unlink symlink", [&] { return err_of(::unlink((m + "/sl").c_str())); }},
      {"unlink fifo", [&] { return err_of(::unlink((m + "/fifo").c_str())); }},
      {"chown to nobody's own ids (moves ctime)",
       [&] { return err_of(::chown(f.c_str(), static_cast<uid_t>(-1), static_cast<gid_t>(-1))); }},
  };
  // removexattr needs the attribute to exist or the kernel never asks.
  ASSERT_EQ(::setxattr((fs.backing() + "/f").c_str(), "user.seeded", "1", 1, 0), 0);
  const std::string seeded = tree_digest(fs.backing());
  expect_all_refused(attempts);

  // Root-only attempts.
  std::vector<Attempt> root_only = {
      {"chown", [&] { return err_of(::chown(f.c_str(), 1, 1)); }},
      {"lchown symlink", [&] { return err_of(::lchown((m + "/sl").c_str(), 1, 1)); }},
      {"mknod char device",
       [&] { return err_of(::mknod((m + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3))); }},
      {"trusted xattr on symlink",
       [&] { return err_of(::lsetxattr((m + "/sl").c_str(), "trusted.x", "1", 1, 0)); }},
      {"chmod mount root", [&] { return err_of(::chmod(m.c_str(), 0700)); }},
      {"chown mount root", [&] { return err_of(::chown(m.c_str(), 1, 1)); }},
      {"touch mount root", [&] { return err_of(::utimensat(AT_FDCWD, m.c_str(), nullptr, 0)); }},
      {"setxattr mount root", [&] { return err_of(::setxattr(m.c_str(), "user.x", "1", 1, 0)); }},
  };
  expect_all_refused(root_only, /*also_as_nobody=*/false);
  EXPECT_EQ(tree_digest(fs.backing()), seeded);
  EXPECT_EQ(read_file(fs.backing() + "/f"), "original\n");
  (void)before;

  // Tools, as root and as nobody, including removing every root entry.
  for (std::optional<uid_t> uid : {std::optional<uid_t>{}, std::optional<uid_t>{kNobody}}) {
    for (const char* cmd :
         {"rm -rf ./*", "rm -rf d", "touch .", "chmod 700 .", "setfattr -n user.y -v 1 d",
          "setfattr -n user.y -v 1 .", "cp --reflink=always f f.clone",
          "cp --reflink=auto f f.copy", "sed -i s/original/changed/ f", "chattr +i f",
          "python3 -c \"import fcntl,os; s=os.open('f',os.O_RDONLY); "
          "d=os.open('d/g',os.O_RDONLY); fcntl.ioctl(d, 0x40049409, s)\"",
          "git init -q repo", "ln -s f 'name\nwith newline'", "touch '*' '[a]' '?'"}) {
      auto r = fs.sh(cmd, uid);
      EXPECT_NE(r.exit_code, 0) << (uid ? "nobody: " : "root: ") << cmd << ": " << r.output;
    }
  }
  EXPECT_EQ(tree_digest(fs.backing()), seeded);
}

// ---------------------------------------------------------------------------
// A descriptor opened under the lease, used after revocation, every write path.
// ---------------------------------------------------------------------------

class BypassRevokedFd : public ::testing::TestWithParam<bool /*as_nobody*/> {};

TEST_P(BypassRevokedFd, EveryWritePathIsRefused) {
  MountedFs fs;
  seed(fs,
       "chmod 777 .; printf '%s' 0123456789abcdef > f; chmod 666 f; echo src > s; "
       "chmod 666 s; "
       "chown 65534:65534 f");
  const std::optional<uid_t> uid = GetParam() ? std::optional<uid_t>(kNobody) : std::nullopt;
  const std::string outside = fs.base() + "/outside.txt";
  {
    std::ofstream(outside) << "outside data\n";
    ::chmod(outside.c_str(), 0644);
  }
  const std::string f = fs.mnt() + "/f";
  const std::string s = fs.mnt() + "/s";
  const std::string content = read_file(fs.backing() + "/f");

  // Each attempt opens under a lease, revokes, then tries; the child reports.
  // The parent flips the lease: we pass descriptors through a fork, so the
  // child opens, signals, and the parent revokes. Simpler: open in the child
  // while the lease holds, then wait for the parent's revoke through a pipe.
  using Try = std::function<int(int fd)>;
  struct Case {
    std::string name;
    int open_flags;
    Try fn;
  };
  std::vector<Case> cases = {
      {"write", O_RDWR, [](int fd) { return err_of(::write(fd, "X", 1)); }},
      {"pwrite", O_RDWR, [](int fd) { return err_of(::pwrite(fd, "X", 1, 3)); }},
      {"pwrite past end", O_RDWR, [](int fd) { return err_of(::pwrite(fd, "X", 1, 1 << 20)); }},
      {"writev", O_RDWR,
       [](int fd) {
         char a[] = "A", b[] = "B";
         iovec iov[2] = {{a, 1}, {b, 1}};
         return err_of(::writev(fd, iov, 2));
       }},
      {"pwritev2 RWF_APPEND", O_RDWR,
       [](int fd) {
         char a[] = "A";
         iovec iov{a, 1};
         return err_of(::pwritev2(fd, &iov, 1, -1, RWF_APPEND));
       }},
      {"write O_APPEND fd", O_WRONLY | O_APPEND,
       [](int fd) { return err_of(::write(fd, "X", 1)); }},
      {"write O_DIRECT fd", O_RDWR | O_DIRECT,
       [](int fd) {
         void* buf = nullptr;
         if (::posix_memalign(&buf, 4096, 4096) != 0) return 100;
         std::memset(buf, 'D', 4096);
         return err_of(::pwrite(fd, buf, 4096, 0));
       }},
      {"ftruncate shrink", O_RDWR, [](int fd) { return err_of(::ftruncate(fd, 1)); }},
      {"ftruncate grow", O_RDWR, [](int fd) { return err_of(::ftruncate(fd, 1 << 20)); }},
      {"fallocate", O_RDWR, [](int fd) { return err_of(::fallocate(fd, 0, 0, 1 << 20)); }},
      {"fallocate KEEP_SIZE", O_RDWR,
       [](int fd) { return err_of(::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1 << 20)); }},
      {"fallocate PUNCH_HOLE", O_RDWR,
       [](int fd) {
         return err_of(::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 8));
       }},
      {"fallocate ZERO_RANGE", O_RDWR,
       [](int fd) { return err_of(::fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 8)); }},
      {"copy_file_range from mount", O_RDWR,
       [s](int fd) {
         int in = ::open(s.c_str(), O_RDONLY);
         loff_t off = 0;
         return err_of(::copy_file_range(in, &off, fd, nullptr, 3, 0));
       }},
      {"copy_file_range from outside", O_RDWR,
       [outside](int fd) {
         int in = ::open(outside.c_str(), O_RDONLY);
         loff_t off = 0;
         // The kernel itself refuses a copy across filesystems (EXDEV).
         int e = err_of(::copy_file_range(in, &off, fd, nullptr, 3, 0));
         return e == EXDEV ? EACCES : e;
       }},
      {"sendfile into fd", O_RDWR,
       [outside](int fd) {
         int in = ::open(outside.c_str(), O_RDONLY);
         return err_of(::sendfile(fd, in, nullptr, 5));
       }},
      {"splice pipe into fd", O_RDWR,
       [](int fd) {
         int p[2];
         if (::pipe(p) != 0) return 100;
         if (::write(p[1], "SPLICE", 6) != 6) return 101;
         return err_of(::splice(p[0], nullptr, fd, nullptr, 6, 0));
       }},
      {"vmsplice + splice into fd", O_RDWR,
       [](int fd) {
         int p[2];
         if (::pipe(p) != 0) return 100;
         static char page[4096] = "VMSPLICE";
         iovec iov{page, sizeof page};
         if (::vmsplice(p[1], &iov, 1, SPLICE_F_GIFT) < 0) return 101;
         return err_of(::splice(p[0], nullptr, fd, nullptr, sizeof page, SPLICE_F_MOVE));
       }},
      {"futimens", O_RDWR, [](int fd) { return err_of(::futimens(fd, nullptr)); }},
      {"futimens on O_RDONLY fd", O_RDONLY, [](int fd) { return err_of(::futimens(fd, nullptr)); }},
      {"fchmod", O_RDWR, [](int fd) { return err_of(::fchmod(fd, 0600)); }},
      {"fchown to self", O_RDWR,
       [](int fd) { return err_of(::fchown(fd, ::getuid(), ::getgid())); }},
      {"fsetxattr", O_RDWR, [](int fd) { return err_of(::fsetxattr(fd, "user.late", "1", 1, 0)); }},
      {"fremovexattr", O_RDWR, [](int fd) { return err_of(::fremovexattr(fd, "user.seeded")); }},
      {"/proc/self/fd reopen O_WRONLY", O_RDWR,
       [](int fd) {
         return err_of(::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_WRONLY));
       }},
      {"dup then write", O_RDWR, [](int fd) { return err_of(::write(::dup(fd), "X", 1)); }},
  };
  ASSERT_EQ(::setxattr((fs.backing() + "/f").c_str(), "user.seeded", "1", 1, 0), 0);
  const std::string before = tree_digest(fs.backing());

  for (const auto& c : cases) {
    fs.grant();
    int to_child[2], to_parent[2];
    ASSERT_EQ(::pipe(to_child), 0);
    ASSERT_EQ(::pipe(to_parent), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (uid && (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
                  ::setresuid(*uid, *uid, *uid) != 0)) {
        ::_exit(254);
      }
      int fd = ::open(f.c_str(), c.open_flags);
      char ok = fd >= 0 ? 'o' : 'e';
      if (::write(to_parent[1], &ok, 1) != 1) ::_exit(253);
      if (fd < 0) ::_exit(252);
      char go = 0;
      if (::read(to_child[0], &go, 1) != 1) ::_exit(251);
      ::_exit(c.fn(fd) & 0xff);
    }
    char ok = 0;
    ASSERT_EQ(::read(to_parent[0], &ok, 1), 1);
    EXPECT_EQ(ok, 'o') << c.name << ": could not open under the lease";
    fs.revoke();
    ASSERT_EQ(::write(to_child[1], "g", 1), 1);
    int status = 0;
    ::waitpid(pid, &status, 0);
    for (int p : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) ::close(p);
    ASSERT_TRUE(WIFEXITED(status)) << c.name;
    EXPECT_EQ(WEXITSTATUS(status), EACCES) << c.name;
    EXPECT_EQ(tree_digest(fs.backing()), before) << c.name;
    // The mount's view did not keep refused bytes either.
    EXPECT_EQ(read_file(f), content) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(RootAndNobody, BypassRevokedFd, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "nobody" : "root"; });

// ---------------------------------------------------------------------------
// Shared writable mmap. Stores into the mapping are not syscalls; they reach the
// daemon only as WRITE requests at writeback (msync, munmap, periodic flush).
// Those WRITE requests are gated like any other write: with no lease at
// writeback time the bytes never reach the backing file.
//
// The mapping lives in a child process. The FUSE server runs in this test
// process, and munmap waits for writeback while holding its process's mmap lock:
// in one process, a server thread that needs that lock (a page fault, an
// allocator mapping memory) would deadlock with it.
// ---------------------------------------------------------------------------

TEST(Bypass, SharedMmapStoresAfterRevokeNeverReachTheBackingFile) {
  MountedFs fs;
  seed(fs, "printf '%s' 0123456789abcdef > f; chmod 666 f");
  const std::string f = fs.mnt() + "/f";
  const std::string content = read_file(fs.backing() + "/f");
  fs.grant();
  Lockstep child([&](Lockstep& step) {
    base::UniqueFd fd(::open(f.c_str(), O_RDWR | O_CLOEXEC));
    void* mem =
        fd ? ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0) : MAP_FAILED;
    step.tell(mem == MAP_FAILED ? 'x' : 'm');
    if (mem == MAP_FAILED) return 2;
    step.await();  // revoked
    std::memcpy(mem, "MMAP", 4);
    const int sync_rc = ::msync(mem, 4096, MS_SYNC);
    step.tell(sync_rc != 0 && errno == EACCES ? 'r' : 'w');
    step.await();  // granted again
    ::munmap(mem, 4096);
    return 0;
  });
  ASSERT_EQ(child.await_child(), 'm') << "the child could not map the file";
  fs.revoke();
  child.go();
  EXPECT_EQ(child.await_child(), 'r') << "msync after the revoke was not refused with EACCES";
  EXPECT_EQ(read_file(fs.backing() + "/f"), content);
  // A later lease does not carry the refused stores to the file either.
  fs.grant();
  child.go();
  EXPECT_EQ(child.join(60), 0);
  EXPECT_EQ(read_file(fs.backing() + "/f"), content);
  // The refused page is also dropped from the kernel's cache, so readers through
  // the mount do not see the refused stores either (tests/security/
  // fileplane_mmap_test.cpp).
}

// Stores made while unleased and never synced sit in the page cache until
// writeback (here: munmap). They reach the file only if a lease covering the file
// is in force at that moment; one narrowed to other paths does not carry them.
TEST(Bypass, SharedMmapDeferredStoresNeedALeaseCoveringTheFileAtWriteback) {
  MountedFs fs;
  seed(fs, "printf '%s' 0123456789abcdef > f; chmod 666 f");
  const std::string f = fs.mnt() + "/f";
  const std::string content = read_file(fs.backing() + "/f");
  fs.grant();
  Lockstep child([&](Lockstep& step) {
    base::UniqueFd fd(::open(f.c_str(), O_RDWR | O_CLOEXEC));
    void* mem =
        fd ? ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0) : MAP_FAILED;
    step.tell(mem == MAP_FAILED ? 'x' : 'm');
    if (mem == MAP_FAILED) return 2;
    step.await();  // revoked
    std::memcpy(mem, "LATE", 4);
    step.tell('s');
    step.await();  // a lease for other paths only
    ::munmap(mem, 4096);
    return 0;
  });
  ASSERT_EQ(child.await_child(), 'm') << "the child could not map the file";
  fs.revoke();
  child.go();
  ASSERT_EQ(child.await_child(), 's');
  EXPECT_EQ(read_file(fs.backing() + "/f"), content);
  fs.publish(leased_snapshot(3, {"other/**"}));
  child.go();
  EXPECT_EQ(child.join(60), 0);
  EXPECT_EQ(read_file(fs.backing() + "/f"), content);
}

TEST(Bypass, SharedMmapOfReadOnlyDescriptorCannotWrite) {
  MountedFs fs;
  seed(fs, "mkdir .longrun; echo '{}' > .longrun/state.json; echo data > f; chmod 666 f");
  fs.grant();
  for (const char* name : {"/f", "/.longrun/state.json"}) {
    base::UniqueFd fd(::open((fs.mnt() + name).c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd);
    EXPECT_EQ(::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0), MAP_FAILED);
    EXPECT_EQ(errno, EACCES);
    // A private writable mapping is copy-on-write and never written back.
    void* mem = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
    ASSERT_NE(mem, MAP_FAILED);
    std::memcpy(mem, "PRIV", 4);
    ::msync(mem, 4096, MS_SYNC);
    ::munmap(mem, 4096);
  }
  EXPECT_EQ(read_file(fs.backing() + "/f"), "data\n");
  EXPECT_EQ(read_file(fs.backing() + "/.longrun/state.json"), "{}\n");
}

// ---------------------------------------------------------------------------
// .longrun/ with a full lease.
// ---------------------------------------------------------------------------

TEST(Bypass, LongrunWithALease) {
  MountedFs fs;
  seed(fs,
       "chmod 777 .; mkdir -m 777 .longrun .longrun/sub; echo '{}' > .longrun/state.json; "
       "chmod 666 .longrun/state.json; chown 65534:65534 .longrun .longrun/state.json; echo x > "
       "outside; chmod 666 outside; mkdir -m 777 dir; "
       "echo y > dir/y; chmod 666 dir/y");
  ASSERT_EQ(::setxattr((fs.backing() + "/.longrun/state.json").c_str(), "user.seeded", "1", 1, 0),
            0);
  fs.grant();
  const std::string m = fs.mnt();
  const std::string lr = m + "/.longrun";
  const std::string st = lr + "/state.json";
  const std::string abs_state = fs.backing() + "/.longrun/state.json";
  const std::string before = tree_digest(fs.backing());
  auto exch = [](const std::string& a, const std::string& b) {
    return err_of(::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE));
  };
  std::vector<Attempt> attempts = {
      {"open state O_RDWR", [&] { return err_of(::open(st.c_str(), O_RDWR)); }},
      {"open state O_RDONLY|O_TRUNC",
       [&] { return err_of(::open(st.c_str(), O_RDONLY | O_TRUNC)); }},
      {"O_PATH reopen for write",
       [&] {
         int p = ::open(st.c_str(), O_PATH);
         if (p < 0) return 100;
         return err_of(::open(("/proc/self/fd/" + std::to_string(p)).c_str(), O_WRONLY));
       }},
      {"openat(.longrun fd, state.json, O_WRONLY)",
       [&] {
         int d = ::open(lr.c_str(), O_PATH | O_DIRECTORY);
         if (d < 0) return 100;
         return err_of(::openat(d, "state.json", O_WRONLY));
       }},
      {"create in .longrun",
       [&] { return err_of(::open((lr + "/new").c_str(), O_WRONLY | O_CREAT, 0644)); }},
      {"creat state", [&] { return err_of(::creat(st.c_str(), 0644)); }},
      {"truncate state", [&] { return err_of(::truncate(st.c_str(), 0)); }},
      {"utimensat state", [&] { return err_of(::utimensat(AT_FDCWD, st.c_str(), nullptr, 0)); }},
      {"chmod state", [&] { return err_of(::chmod(st.c_str(), 0600)); }},
      {"setxattr state", [&] { return err_of(::setxattr(st.c_str(), "user.x", "1", 1, 0)); }},
      {"removexattr state", [&] { return err_of(::removexattr(st.c_str(), "user.seeded")); }},
      {"setxattr .longrun", [&] { return err_of(::setxattr(lr.c_str(), "user.x", "1", 1, 0)); }},
      {"chmod .longrun", [&] { return err_of(::chmod(lr.c_str(), 0700)); }},
      {"touch .longrun", [&] { return err_of(::utimensat(AT_FDCWD, lr.c_str(), nullptr, 0)); }},
      {"mkdir under .longrun", [&] { return err_of(::mkdir((lr + "/d").c_str(), 0755)); }},
      {"mkdir under .longrun/sub", [&] { return err_of(::mkdir((lr + "/sub/d").c_str(), 0755)); }},
      {"mkfifo under .longrun", [&] { return err_of(::mkfifo((lr + "/p").c_str(), 0644)); }},
      {"symlink in .longrun", [&] { return err_of(::symlink("/etc", (lr + "/l").c_str())); }},
      {"rmdir .longrun/sub", [&] { return err_of(::rmdir((lr + "/sub").c_str())); }},
      {"unlink state", [&] { return err_of(::unlink(st.c_str())); }},
      {"rename into .longrun",
       [&] { return err_of(::rename((m + "/outside").c_str(), (lr + "/planted").c_str())); }},
      {"rename dir into .longrun",
       [&] { return err_of(::rename((m + "/dir").c_str(), (lr + "/dir").c_str())); }},
      {"rename over state", [&] { return err_of(::rename((m + "/outside").c_str(), st.c_str())); }},
      {"rename out of .longrun",
       [&] { return err_of(::rename(st.c_str(), (m + "/stolen").c_str())); }},
      {"rename within .longrun",
       [&] { return err_of(::rename(st.c_str(), (lr + "/sub/s").c_str())); }},
      {"rename .longrun", [&] { return err_of(::rename(lr.c_str(), (m + "/lr2").c_str())); }},
      {"rename dir over .longrun",
       [&] { return err_of(::rename((m + "/dir").c_str(), lr.c_str())); }},
      {"RENAME_EXCHANGE .longrun <-> dir", [&] { return exch(lr, m + "/dir"); }},
      {"RENAME_EXCHANGE dir <-> .longrun", [&] { return exch(m + "/dir", lr); }},
      {"RENAME_EXCHANGE state <-> outside", [&] { return exch(st, m + "/outside"); }},
      {"RENAME_EXCHANGE outside <-> state", [&] { return exch(m + "/outside", st); }},
      {"RENAME_EXCHANGE dir <-> .longrun/sub", [&] { return exch(m + "/dir", lr + "/sub"); }},
      {"link state out", [&] { return err_of(::link(st.c_str(), (m + "/hard-out").c_str())); }},
      {"link in", [&] { return err_of(::link((m + "/outside").c_str(), (lr + "/in").c_str())); }},
      {"write through symlink to state",
       [&] {
         if (::symlink(".longrun/state.json", (m + "/to-state").c_str()) != 0) return 100;
         int fd = ::open((m + "/to-state").c_str(), O_WRONLY);
         int e = err_of(fd);
         ::unlink((m + "/to-state").c_str());
         return e;
       }},
      {"write through symlink to .longrun dir",
       [&] {
         if (::symlink(".longrun", (m + "/to-lr").c_str()) != 0) return 100;
         int fd = ::open((m + "/to-lr/new").c_str(), O_WRONLY | O_CREAT, 0644);
         int e = err_of(fd);
         ::unlink((m + "/to-lr").c_str());
         return e;
       }},
  };
  expect_all_refused(attempts);

  // The daemon must not follow a symlink the agent planted when it acts on it:
  // a link whose target is the backing state file, changed "as the link".
  ASSERT_EQ(::symlink(abs_state.c_str(), (m + "/abs").c_str()), 0);
  std::vector<Attempt> root_only = {
      {"lsetxattr trusted on symlink to backing state",
       [&] { return err_of(::lsetxattr((m + "/abs").c_str(), "trusted.x", "1", 1, 0)); }, kAny},
      {"lchown symlink to backing state",
       [&] { return err_of(::lchown((m + "/abs").c_str(), 1, 1)); }, kAny},
      {"fchmodat AT_SYMLINK_NOFOLLOW on symlink to backing state",
       [&] {
         return err_of(::syscall(452 /* fchmodat2 */, AT_FDCWD, (m + "/abs").c_str(), 0600,
                                 AT_SYMLINK_NOFOLLOW));
       },
       kAny},
      {"utimensat AT_SYMLINK_NOFOLLOW on symlink to backing state",
       [&] {
         timespec ts[2] = {{1, 0}, {1, 0}};
         return err_of(::utimensat(AT_FDCWD, (m + "/abs").c_str(), ts, AT_SYMLINK_NOFOLLOW));
       },
       kAny},
      {"link symlink to backing state",
       [&] { return err_of(::link((m + "/abs").c_str(), (m + "/abs-hard").c_str())); }, kAny},
  };
  expect_all_refused(root_only, false);
  ::unlink((m + "/abs").c_str());
  ::unlink((m + "/abs-hard").c_str());
  for (const char* cmd : {"rm -rf .longrun", "cp -r dir .longrun/", "mv .longrun .lr",
                          "sed -i s/x/y/ .longrun/state.json", "setfattr -n user.x -v 1 .longrun",
                          "touch .longrun", "git init -q .longrun"}) {
    auto r = fs.sh(cmd);
    EXPECT_NE(r.exit_code, 0) << cmd << ": " << r.output;
  }
  EXPECT_EQ(tree_digest(fs.backing()), before);
  struct stat sst {};
  ASSERT_EQ(::stat(abs_state.c_str(), &sst), 0);
  EXPECT_EQ(sst.st_mode & 0777, 0666u);
  EXPECT_EQ(sst.st_uid, kNobody);
  char v[8];
  EXPECT_EQ(::getxattr(abs_state.c_str(), "trusted.x", v, sizeof v), -1);
}

TEST(Bypass, LongrunNamesWhenItDoesNotExistYet) {
  MountedFs fs;
  seed(fs, "chmod 777 .; echo x > f; chmod 666 f; mkdir -m 777 d");
  fs.grant();
  const std::string m = fs.mnt();
  std::vector<Attempt> attempts = {
      {"symlink named .longrun", [&] { return err_of(::symlink("d", (m + "/.longrun").c_str())); }},
      {"mkdir .longrun", [&] { return err_of(::mkdir((m + "/.longrun").c_str(), 0755)); }},
      {"create .longrun",
       [&] { return err_of(::open((m + "/.longrun").c_str(), O_WRONLY | O_CREAT, 0644)); }},
      {"rename dir to .longrun",
       [&] { return err_of(::rename((m + "/d").c_str(), (m + "/.longrun").c_str())); }},
      {"link to .longrun",
       [&] { return err_of(::link((m + "/f").c_str(), (m + "/.longrun").c_str())); }},
      {"mkfifo .longrun", [&] { return err_of(::mkfifo((m + "/.longrun").c_str(), 0644)); }},
  };
  const std::string before = tree_digest(fs.backing());
  expect_all_refused(attempts);
  EXPECT_EQ(tree_digest(fs.backing()), before);
  // Look-alikes are ordinary names.
  auto r = fs.sh("ln -s d .longrun-x && mkdir .longrunx && mkdir d/.longrun");
  EXPECT_TRUE(r.ok()) << r.output;
}

// ---------------------------------------------------------------------------
// Path-narrowed grants.
// ---------------------------------------------------------------------------

class BypassScoped : public ::testing::Test {
 protected:
  void SetUp() override {
    seed(fs_,
         "chmod 777 .; mkdir -m 777 src docs; echo doc > docs/x; echo c > src/a.c; echo c2 > "
         "src/b.c; "
         "chmod 666 docs/x src/a.c src/b.c; ln -s ../docs/x src/link; "
         "echo outofscope > 'src/z.c (deleted)'; chmod 666 'src/z.c (deleted)'");
  }
  MountedFs fs_;
};

TEST_F(BypassScoped, HardLinkOfAnOutOfScopeFileIntoScopeIsRefused) {
  fs_.publish(leased_snapshot(1, {"src/**"}));
  const std::string before = tree_digest(fs_.backing());
  for (std::optional<uid_t> uid : {std::optional<uid_t>{}, std::optional<uid_t>{kNobody}}) {
    auto r = fs_.sh("ln docs/x src/x", uid);
    EXPECT_NE(r.exit_code, 0) << r.output;
    r = fs_.sh("ln -P docs/x src/x2 || link docs/x src/x3", uid);
    EXPECT_NE(r.exit_code, 0) << r.output;
  }
  EXPECT_EQ(tree_digest(fs_.backing()), before);
  // src/x is then an ordinary new file in scope; docs/x is untouched.
  auto r = fs_.sh("echo mine > src/x");
  EXPECT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/docs/x"), "doc\n");
}

TEST_F(BypassScoped, SymlinkInsideScopePointingOutIsResolvedByTheKernel) {
  fs_.publish(leased_snapshot(1, {"src/**"}));
  const std::string before = tree_digest(fs_.backing());
  for (std::optional<uid_t> uid : {std::optional<uid_t>{}, std::optional<uid_t>{kNobody}}) {
    for (const char* cmd :
         {"echo pwned > src/link", "echo pwned >> src/link", "truncate -s 0 src/link",
          "touch src/link", "chmod 600 src/link", "echo pwned > src/../docs/x",
          "cp src/a.c src/../docs/x", "mv src/a.c docs/a.c", "mv docs/x src/x", "mv src docs/src",
          "ln src/a.c docs/y", "rm docs/x", "setfattr -n user.x -v 1 src/link",
          "sed -i s/c/d/ src/../src/../docs/x"}) {
      auto r = fs_.sh(cmd, uid);
      EXPECT_NE(r.exit_code, 0) << (uid ? "nobody: " : "root: ") << cmd << ": " << r.output;
    }
  }
  EXPECT_EQ(tree_digest(fs_.backing()), before);
  // In scope still works, names with newlines and glob characters included.
  auto r = fs_.sh(
      "echo ok > src/a.c && touch 'src/new\nline' 'src/*' 'src/[ab].c' && "
      "ln -s ../docs/x src/link2");
  EXPECT_TRUE(r.ok()) << r.output;
}

// A name that ends in " (deleted)" is not a deleted file: `*.c` must not cover
// "z.c (deleted)" because /proc shows unlinked files with that suffix.
TEST_F(BypassScoped, NameEndingInDeletedIsNotMistakenForTheUnlinkedFile) {
  fs_.publish(leased_snapshot(1, {"src/*.c"}));
  const std::string before = tree_digest(fs_.backing());
  const std::string z = fs_.mnt() + "/src/z.c (deleted)";
  EXPECT_EQ(in_child(std::nullopt, [&] { return err_of(::open(z.c_str(), O_WRONLY)); }), EACCES);
  EXPECT_EQ(in_child(std::nullopt, [&] { return err_of(::truncate(z.c_str(), 0)); }), EACCES);
  EXPECT_EQ(tree_digest(fs_.backing()), before);
  // A genuinely unlinked file opened in scope keeps its path for the gate.
  auto r = fs_.sh("exec 3<>src/a.c && rm src/a.c && echo more >&3");
  EXPECT_TRUE(r.ok()) << r.output;
}

// A descriptor opened in one turn, whose file was moved, is judged by where the
// file is now, not by the name it was opened under.
TEST_F(BypassScoped, DescriptorFollowsItsFileAcrossRenames) {
  fs_.publish(leased_snapshot(1));
  base::UniqueFd fd(::open((fs_.mnt() + "/docs/x").c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(fd);
  ASSERT_EQ(::rename((fs_.mnt() + "/docs/x").c_str(), (fs_.mnt() + "/src/moved").c_str()), 0);
  // Turn 2 grants docs/** only: the file is src/moved now, out of scope.
  fs_.publish(leased_snapshot(2, {"docs/**"}));
  const std::string before = tree_digest(fs_.backing());
  errno = 0;
  EXPECT_EQ(::pwrite(fd.get(), "PWNED", 5, 0), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(::ftruncate(fd.get(), 0), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_NE(::fallocate(fd.get(), FALLOC_FL_KEEP_SIZE, 0, 1 << 16), 0);
  EXPECT_EQ(errno, EACCES);
  EXPECT_NE(::fchmod(fd.get(), 0600), 0);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(tree_digest(fs_.backing()), before);
  // Turn 3 grants src/**: now it is in scope.
  fs_.publish(leased_snapshot(3, {"src/**"}));
  EXPECT_EQ(::pwrite(fd.get(), "d", 1, 0), 1) << strerror(errno);
  fd.reset();
  EXPECT_EQ(read_file(fs_.backing() + "/src/moved"), "doc\n");
}

// Opened in scope, moved out of it: the rename itself needs both ends.
TEST_F(BypassScoped, OpenInScopeThenRenameOutIsRefused) {
  fs_.publish(leased_snapshot(1, {"src/**"}));
  base::UniqueFd fd(::open((fs_.mnt() + "/src/a.c").c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(fd);
  EXPECT_NE(::rename((fs_.mnt() + "/src/a.c").c_str(), (fs_.mnt() + "/docs/a.c").c_str()), 0);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(::access((fs_.backing() + "/src/a.c").c_str(), F_OK), 0);
  EXPECT_EQ(::access((fs_.backing() + "/docs/a.c").c_str(), F_OK), -1);
}

}  // namespace
}  // namespace leasefs::test

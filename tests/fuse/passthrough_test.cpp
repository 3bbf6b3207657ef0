// With a lease, the mount behaves like the directory underneath; without one,
// reads still work.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/support/mounted_fs.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

class Passthrough : public ::testing::Test {
 protected:
  MountedFs fs;
};

TEST_F(Passthrough, MountinfoShowsFuseLeasefsWithRootAsSource) {
  std::string info = slurp("/proc/self/mountinfo");
  auto pos = info.find(" " + fs.mnt() + " ");
  ASSERT_NE(pos, std::string::npos) << info;
  auto eol = info.find('\n', pos);
  std::string line = info.substr(pos, eol - pos);
  EXPECT_NE(line.find(" - fuse.leasefs " + fs.backing() + " "), std::string::npos) << line;
}

TEST_F(Passthrough, ReadsAreNeverRefusedWithoutALease) {
  ::mkdir((fs.backing() + "/src").c_str(), 0755);
  spit(fs.backing() + "/src/a.c", "int main() { return 42; }\n");
  auto r = fs.sh("cat src/a.c && grep -r 'return 42' . && ls -la src && stat src/a.c");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("int main"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("./src/a.c:"), std::string::npos) << r.output;
  r = fs.sh("cat src/a.c", 65534);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(Passthrough, WriteReadRoundTripWithLease) {
  fs.grant();
  auto r = fs.sh(
      "set -e; echo hello > f; echo more >> f; cat f; mkdir -p d/e; mv f d/e/g; "
      "ln -s e/g d/link; cat d/link; ln d/e/g hard; stat -c %h hard; rm hard; "
      "truncate -s 3 d/e/g; cat d/e/g; echo; rmdir d/e 2>/dev/null || true; ls d");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(slurp(fs.backing() + "/d/e/g"), "hel");
  EXPECT_NE(r.output.find("hello\nmore\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2\n"), std::string::npos) << r.output;
}

TEST_F(Passthrough, FileCreatedByUserIsOwnedByThatUser) {
  ::chmod(fs.backing().c_str(), 01777);
  fs.grant();
  auto r = fs.sh("echo x > mine && mkdir mydir && ln -s mine mylink", 65534);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"/mine", "/mydir", "/mylink"}) {
    struct stat st {};
    ASSERT_EQ(::lstat((fs.backing() + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_uid, 65534u) << name;
    EXPECT_EQ(st.st_gid, 65534u) << name;
  }
  struct stat st {};
  ASSERT_EQ(::stat((fs.backing() + "/mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // the caller's umask (022), not ours
}

// A worker skips umask(2) when the caller's is the one it set last: each
// create still gets its own caller's umask, whatever came before it.
TEST_F(Passthrough, EachCreateGetsItsCallersUmask) {
  fs.grant();
  auto r = fs.sh(
      "set -e; for i in 1 2 3 4 5 6 7 8; do (umask 022; echo x > a$i; mkdir da$i); "
      "(umask 077; echo x > b$i; mkdir db$i); (umask 002; echo x > c$i); done");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto mode = [&](const std::string& name) {
    struct stat st {};
    EXPECT_EQ(::lstat((fs.backing() + "/" + name).c_str(), &st), 0) << name;
    return st.st_mode & 0777;
  };
  for (int i = 1; i <= 8; ++i) {
    const std::string n = std::to_string(i);
    EXPECT_EQ(mode("a" + n), 0644u) << n;
    EXPECT_EQ(mode("da" + n), 0755u) << n;
    EXPECT_EQ(mode("b" + n), 0600u) << n;
    EXPECT_EQ(mode("db" + n), 0700u) << n;
    EXPECT_EQ(mode("c" + n), 0664u) << n;
  }
}

TEST_F(Passthrough, SparseFileBeyondFourGiB) {
  fs.grant();
  auto r = fs.sh(
      "set -e; truncate -s 5G big; printf 'tail-data' | dd of=big bs=1 seek=4831838208 "
      "conv=notrunc status=none; dd if=big bs=1 skip=4831838208 count=9 status=none; echo; "
      "stat -c %s big");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tail-data\n5368709120"), std::string::npos) << r.output;
  struct stat st {};
  ASSERT_EQ(::stat((fs.backing() + "/big").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 5368709120);
  EXPECT_LT(st.st_blocks * 512, 1 << 20);  // still sparse underneath
}

TEST_F(Passthrough, TimesAndModesWithNanoseconds) {
  fs.grant();
  auto r = fs.sh(
      "set -e; touch f; touch -d '2001-02-03 04:05:06.123456789' f; stat -c '%y' f; "
      "chmod 0600 f; stat -c '%a' f; touch -a f");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2001-02-03 04:05:06.123456789"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("600"), std::string::npos) << r.output;
}

// chmod and utimes by path (the daemon sets them through /proc/self/fd/N) give
// a caller who is not root what the file system underneath gives it: the same
// script as uid 65534, natively and through the mount, prints the same lines.
TEST_F(Passthrough, ModesAndTimesByAnotherUserAreAnsweredAsNatively) {
  fs.grant();
  TempDir native;
  const std::string script =
      "python3 -c \"\n"
      "import errno, os\n"
      "def t(name, f):\n"
      "    try:\n"
      "        f(); print(name, 'ok')\n"
      "    except OSError as e:\n"
      "        print(name, errno.errorcode[e.errno])\n"
      "open('mine', 'w').close(); os.mkdir('mydir')\n"
      "t('chmod own', lambda: os.chmod('mine', 0o640))\n"
      "t('chmod own dir', lambda: os.chmod('mydir', 0o700))\n"
      "t('chmod setgid own', lambda: os.chmod('mydir', 0o2750))\n"
      "t('chmod root file', lambda: os.chmod('rootfile', 0o600))\n"
      "t('chmod root dir', lambda: os.chmod('rootdir', 0o700))\n"
      "t('now on writable', lambda: os.utime('rootfile', None))\n"
      "t('now on read-only', lambda: os.utime('rootro', None))\n"
      "t('set on writable', lambda: os.utime('rootfile', (1, 2)))\n"
      "t('set on own', lambda: os.utime('mine', ns=(1000000001, 2000000002)))\n"
      "t('set on own dir', lambda: os.utime('mydir', ns=(3000000003, 4000000004)))\n"
      "for n in ('mine', 'mydir', 'rootfile', 'rootro'):\n"
      "    st = os.stat(n)\n"
      "    print(n, oct(st.st_mode & 0o7777), st.st_uid)\n"
      "for n in ('mine', 'mydir'):\n"
      "    print(n, os.stat(n).st_atime_ns, os.stat(n).st_mtime_ns)\n"
      "\"";
  std::string out[2];
  for (int side = 0; side < 2; ++side) {
    const std::string dir = side == 0 ? native.path() : fs.backing();
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
    ASSERT_EQ(::close(::open((dir + "/rootfile").c_str(), O_CREAT | O_WRONLY, 0666)), 0);
    ASSERT_EQ(::chmod((dir + "/rootfile").c_str(), 0666), 0);
    ASSERT_EQ(::close(::open((dir + "/rootro").c_str(), O_CREAT | O_WRONLY, 0644)), 0);
    ASSERT_EQ(::mkdir((dir + "/rootdir").c_str(), 0777), 0);
    const RunResult r = side == 0 ? run_sh_as(65534, 65534, script, dir) : fs.sh(script, 65534);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    out[side] = r.output;
  }
  EXPECT_EQ(out[1], out[0]);
  // The script reached both answers, allowed and refused.
  EXPECT_NE(out[0].find("chmod own ok\n"), std::string::npos) << out[0];
  EXPECT_NE(out[0].find("chmod root file EPERM\n"), std::string::npos) << out[0];
  EXPECT_NE(out[0].find("now on read-only EACCES\n"), std::string::npos) << out[0];
  EXPECT_NE(out[0].find("set on writable EPERM\n"), std::string::npos) << out[0];
  EXPECT_NE(out[0].find("mine 1000000001 2000000002\n"), std::string::npos) << out[0];
}

TEST_F(Passthrough, RenameFlagsNoReplaceAndExchange) {
  fs.grant();
  auto r = fs.sh(
      "set -e; echo a > a; echo b > b; "
      "python3 -c \"import ctypes,os,sys\n"
      "libc=ctypes.CDLL(None,use_errno=True)\n"
      "AT=-100\n"
      "r=libc.renameat2(AT,b'a',AT,b'b',1)\n"
      "print('noreplace',r,ctypes.get_errno())\n"
      "r=libc.renameat2(AT,b'a',AT,b'b',2)\n"
      "print('exchange',r)\"; cat a b");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("noreplace -1 17"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("exchange 0\nb\na\n"), std::string::npos) << r.output;
}

TEST_F(Passthrough, XattrsWorkWithALease) {
  fs.grant();
  auto r = fs.sh(
      "set -e; echo x > f; python3 -c \"import os\n"
      "os.setxattr('f','user.k',b'v1')\n"
      "print(os.getxattr('f','user.k'))\n"
      "print(os.listxattr('f'))\n"
      "os.removexattr('f','user.k')\n"
      "print(os.listxattr('f'))\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("b'v1'\n['user.k']\n[]"), std::string::npos) << r.output;
}

TEST_F(Passthrough, GitWorkflowWithALease) {
  fs.grant();
  auto r = fs.sh(
      "set -e; git init -q repo; cd repo; echo 'x' > a.txt; mkdir sub; echo y > sub/b; "
      "git add -A; git -c user.name=t -c user.email=t@e commit -qm first; "
      "echo z >> a.txt; git -c user.name=t -c user.email=t@e commit -qam second; "
      "git log --oneline | wc -l; git status --porcelain");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "2\n");
}

TEST_F(Passthrough, CopyFileRangeFallocateAndSeekData) {
  fs.grant();
  auto r = fs.sh(
      "set -e; head -c 100000 /dev/urandom > src; "
      "python3 -c \"import os\n"
      "i=os.open('src',os.O_RDONLY); o=os.open('dst',os.O_WRONLY|os.O_CREAT,0o644)\n"
      "n=0\n"
      "while n<100000: n+=os.copy_file_range(i,o,100000-n)\n"
      "os.close(o)\n"
      "f=os.open('sp',os.O_RDWR|os.O_CREAT,0o644); os.posix_fallocate(f,0,8192)\n"
      "os.ftruncate(f,1<<20); os.pwrite(f,b'x',1<<19)\n"
      "print('data', os.lseek(f,8192,os.SEEK_DATA))\"; cmp src dst; fallocate -l 65536 fa; "
      "stat -c %s fa");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("data 524288\n65536"), std::string::npos) << r.output;
}

TEST_F(Passthrough, LongrunFilesWrittenUnderneathAreSeenFresh) {
  ::mkdir((fs.backing() + "/.longrun").c_str(), 0755);
  spit(fs.backing() + "/.longrun/status.md", "one\n");
  EXPECT_EQ(slurp(fs.mnt() + "/.longrun/status.md"), "one\n");
  EXPECT_FALSE(::access((fs.mnt() + "/.longrun/state.json").c_str(), F_OK) == 0);
  spit(fs.backing() + "/.longrun/status.md", "two, longer\n");
  spit(fs.backing() + "/.longrun/state.json", "{}");
  EXPECT_EQ(slurp(fs.mnt() + "/.longrun/status.md"), "two, longer\n");
  EXPECT_EQ(slurp(fs.mnt() + "/.longrun/state.json"), "{}");
  auto r = fs.sh("ls .longrun");
  EXPECT_EQ(r.output, "state.json\nstatus.md\n");
}

// Listings are cached by the kernel (no OPENDIR, op_readdir.cpp). In .longrun,
// which the daemon changes underneath, a cached listing is dropped when the
// directory's mtime moved; the pause keeps the change out of the clock tick of
// the listing before it, as mtime is only as fine as the file system's clock.
TEST_F(Passthrough, LongrunListingsAreSeenFreshAfterChangesUnderneath) {
  ::mkdir((fs.backing() + "/.longrun").c_str(), 0755);
  spit(fs.backing() + "/.longrun/status.md", "one\n");
  EXPECT_EQ(fs.sh("ls .longrun").output, "status.md\n");
  EXPECT_EQ(fs.sh("ls .longrun").output, "status.md\n");  // from the cache, if at all
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  spit(fs.backing() + "/.longrun/state.json", "{}");
  EXPECT_EQ(fs.sh("ls .longrun").output, "state.json\nstatus.md\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::unlink((fs.backing() + "/.longrun/status.md").c_str());
  EXPECT_EQ(fs.sh("ls .longrun").output, "state.json\n");
}

// Through the mount, a cached listing follows every change at once (the kernel
// drops it itself), and a directory too large for one READDIR reply is listed
// whole, cold and warm, by reopening and seeking for every reply.
TEST_F(Passthrough, ListingsFollowChangesThroughTheMountAndLargeOnesAreWhole) {
  fs.grant();
  ::mkdir((fs.backing() + "/big").c_str(), 0755);
  for (int i = 0; i < 3000; ++i)
    spit(fs.backing() + "/big/entry-with-a-longish-name-" + std::to_string(i), "");
  EXPECT_EQ(fs.sh("ls -f big | grep -c entry-with").output, "3000\n");
  EXPECT_EQ(fs.sh("ls -f big | grep -c entry-with").output, "3000\n");
  EXPECT_EQ(fs.sh("find big -type f | wc -l").output, "3000\n");
  auto r = fs.sh(
      "mkdir d && ls d && touch d/a && ls d && mv d/a d/b && ls d && rm d/b && ls d && "
      "mkdir d/sub && ls d && rmdir d/sub && ls d && echo end");
  EXPECT_EQ(r.output, "a\nb\nsub\nend\n") << r.output;
}

}  // namespace
}  // namespace leasefs::test

// I5 (the agent cannot write .longrun/ even with a lease) and I6 (revocation is
// immediate, also for descriptors opened under the lease), through a real mount.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>

#include "tests/support/mounted_fs.hpp"

namespace leasefs::test {
namespace {

TEST(Invariants, I5_LongrunIsRefusedEvenWithALease) {
  MountedFs fs;
  RunOptions o;
  o.cwd = fs.backing();
  ASSERT_TRUE(run_sh("set -e; mkdir -p .longrun/sub; echo '{}' > .longrun/state.json; "
                     "echo x > outside.txt; mkdir -p src/.longrun",
                     o)
                  .ok());
  fs.grant();
  const std::string before = tree_digest(fs.backing());
  const char* attempts[] = {
      "echo x > .longrun/x",
      "echo x > .longrun/state.json",
      "echo x >> .longrun/state.json",
      "rm .longrun/state.json",
      "mv .longrun/state.json .longrun/s2",
      "mv .longrun/state.json stolen.json",
      "mv outside.txt .longrun/planted",
      "mv .longrun longrun-moved",
      "rmdir .longrun/sub",
      "mkdir .longrun/new",
      "ln -s /etc/passwd .longrun/link",
      "ln .longrun/state.json hard-out",
      "ln outside.txt .longrun/hard-in",
      "chmod 777 .longrun",
      "chmod 600 .longrun/state.json",
      "touch .longrun/state.json",
      "truncate -s 0 .longrun/state.json",
      "python3 -c \"import os; os.setxattr('.longrun/state.json','user.x',b'1')\"",
      "python3 -c \"open('.longrun/state.json','r+').write('[')\"",
      "cp outside.txt .longrun/",
      "rm -rf .longrun",
  };
  for (const char* cmd : attempts) {
    auto r = fs.sh(cmd);
    EXPECT_NE(r.exit_code, 0) << cmd << ": " << r.output;
    EXPECT_NE(r.output.find("Permission denied"), std::string::npos) << cmd << ": " << r.output;
  }
  EXPECT_EQ(tree_digest(fs.backing()), before);
  // Reading is fine, and a .longrun below the root is an ordinary directory.
  auto r = fs.sh("cat .longrun/state.json && echo y > src/.longrun/ok");
  EXPECT_TRUE(r.ok()) << r.output;
}

int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

TEST(Invariants, I6_DescriptorOpenedUnderLeaseCannotWriteAfterRevoke) {
  MountedFs fs;
  fs.grant();
  const std::string path = fs.mnt() + "/f";
  base::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd) << strerror(errno);
  base::UniqueFd src(::open((fs.mnt() + "/f").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_EQ(::write(fd.get(), "leased\n", 7), 7);

  fs.revoke();
  errno = 0;
  EXPECT_EQ(::write(fd.get(), "late\n", 5), -1);
  EXPECT_EQ(errno, EACCES);
  errno = 0;
  EXPECT_EQ(::pwrite(fd.get(), "late\n", 5, 100), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(::ftruncate(fd.get(), 0), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_NE(::fallocate(fd.get(), 0, 0, 1 << 16), 0);
  EXPECT_EQ(errno, EACCES);
  loff_t in = 0;
  EXPECT_EQ(::copy_file_range(src.get(), &in, fd.get(), nullptr, 7, 0), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_NE(::fchmod(fd.get(), 0600), 0);
  EXPECT_EQ(errno, EACCES);
  fd.reset();

  struct stat st {};
  ASSERT_EQ(::stat((fs.backing() + "/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 7);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  // The page cache did not keep the refused bytes either.
  auto r = fs.sh("cat f");
  EXPECT_EQ(r.output, "leased\n");
}

// A child writes in a tight loop on a descriptor opened under the lease, logging
// each write's start, end and result. After publish() of a revocation returns, no
// write that started later may succeed.
TEST(Invariants, I6_RevocationIsImmediateForWritesInFlight) {
  MountedFs fs;
  fs.grant();
  base::UniqueFd fd(::open((fs.mnt() + "/log").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd);

  struct Entry {
    int64_t start_ns, end_ns;
    int result;
  };
  constexpr size_t kMax = 1 << 20;
  struct Shared {
    std::atomic<int> stop;
    std::atomic<size_t> count;
    Entry entries[kMax];
  };
  void* mem =
      ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto* shared = new (mem) Shared{};

  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const char byte = 'x';
    size_t i = 0;
    while (!shared->stop.load() && i < kMax) {
      Entry& e = shared->entries[i];
      e.start_ns = mono_ns();
      ssize_t n = ::write(fd.get(), &byte, 1);
      e.result = n == 1 ? 0 : errno;
      e.end_ns = mono_ns();
      shared->count.store(++i);
    }
    ::_exit(0);
  }
  // Let writes succeed for a while, then revoke in the middle of the stream.
  while (shared->count.load() < 200) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  fs.revoke();
  const int64_t revoked_ns = mono_ns();
  const size_t at_revoke = shared->count.load();
  while (shared->count.load() < at_revoke + 200) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  shared->stop.store(1);
  int status = 0;
  ::waitpid(child, &status, 0);

  size_t ok_before = 0, started_after = 0, ok_after = 0;
  const size_t n = shared->count.load();
  for (size_t i = 0; i < n; ++i) {
    const Entry& e = shared->entries[i];
    if (e.start_ns > revoked_ns) {
      ++started_after;
      if (e.result == 0) ++ok_after;
      EXPECT_EQ(e.result, EACCES) << "write " << i;
    } else if (e.result == 0) {
      ++ok_before;
    }
  }
  EXPECT_GE(ok_before, 200u);
  EXPECT_GE(started_after, 100u);
  EXPECT_EQ(ok_after, 0u) << "writes that started after the revocation succeeded";
  ::munmap(mem, sizeof(Shared));
}

}  // namespace
}  // namespace leasefs::test

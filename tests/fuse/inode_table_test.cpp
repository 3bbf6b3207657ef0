// The compact inode table and fd cache, without a mount: real files in a temp
// directory, the table driven as lookup and forget drive it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <system_error>
#include <vector>

#include "fuse/inode.hpp"
#include "tests/support/temp_dir.hpp"

using namespace leasefs;
using fuse::FdBudget;
using fuse::FdCache;
using fuse::Inode;
using fuse::InodeTable;

namespace {

struct Opened {
  base::UniqueFd fd;
  struct stat st {};
};

Opened open_path(const std::string& path) {
  Opened o;
  o.fd.reset(::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  EXPECT_TRUE(o.fd) << path;
  EXPECT_EQ(::fstat(o.fd.get(), &o.st), 0);
  return o;
}

void touch(const std::string& path) {
  base::UniqueFd fd(::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd) << path;
}

// Through the inode's own fd: the file it stands for.
ino_t ino_via_fd(const Inode& inode) {
  struct stat st {};
  EXPECT_EQ(::fstat(inode.fd.get(), &st), 0);
  return st.st_ino;
}

class InodeTableTest : public ::testing::Test {
 protected:
  test::TempDir dir_;
  std::string path(int i) const { return dir_.path() + "/f" + std::to_string(i); }
};

TEST_F(InodeTableTest, ManyInodesFoundAgainAndForgottenInAnyOrder) {
  constexpr int kFiles = 3000;  // several index growths and pool chunks
  FdBudget budget(1 << 16);
  Opened root = open_path(dir_.path());
  FdCache cache(root.fd.get(), root.st.st_dev, budget, 64);  // most fds evicted
  InodeTable table(&cache);
  std::vector<Inode*> inodes;
  for (int i = 0; i < kFiles; ++i) {
    touch(path(i));
    Opened o = open_path(path(i));
    inodes.push_back(table.acquire(std::move(o.fd), o.st, false));
  }
  EXPECT_EQ(table.size(), static_cast<size_t>(kFiles));
  EXPECT_LE(cache.stats().open, 64u);
  // A second lookup finds the same inode; each one still reaches its own file.
  for (int i = 0; i < kFiles; ++i) {
    Opened o = open_path(path(i));
    ASSERT_EQ(table.acquire(std::move(o.fd), o.st, false), inodes[i]) << i;
    ASSERT_EQ(table.find(o.st.st_dev, o.st.st_ino), inodes[i]);
    ASSERT_EQ(ino_via_fd(*inodes[i]), o.st.st_ino) << i;
  }
  // One reference off each: all stay. Then the odd ones go, then the rest.
  for (Inode* inode : inodes) table.forget(inode, 1);
  EXPECT_EQ(table.size(), static_cast<size_t>(kFiles));
  for (int i = 1; i < kFiles; i += 2) table.forget(inodes[i], 1);
  EXPECT_EQ(table.size(), static_cast<size_t>(kFiles / 2));
  for (int i = 0; i < kFiles; i += 2) {
    struct stat st {};
    ASSERT_EQ(::stat(path(i).c_str(), &st), 0);
    ASSERT_EQ(table.find(st.st_dev, st.st_ino), inodes[i]) << i;  // survived the erasures
    ASSERT_EQ(ino_via_fd(*inodes[i]), st.st_ino) << i;
  }
  for (int i = 1; i < kFiles; i += 2) {
    struct stat st {};
    ASSERT_EQ(::stat(path(i).c_str(), &st), 0);
    EXPECT_EQ(table.find(st.st_dev, st.st_ino), nullptr) << i;
  }
  for (int i = 0; i < kFiles; i += 2) table.forget(inodes[i], 1);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(cache.stats().open, 0u);
  // Pool cells are reused after a forget: new inodes work as well.
  for (int i = 0; i < 10; ++i) {
    Opened o = open_path(path(i));
    Inode* inode = table.acquire(std::move(o.fd), o.st, i == 3);
    EXPECT_EQ(ino_via_fd(*inode), o.st.st_ino);
    EXPECT_EQ(inode->protected_path.load(), i == 3);
    EXPECT_EQ(inode->type, S_IFREG);
    table.forget(inode, 1);
  }
}

TEST_F(InodeTableTest, ANumberReusedByAnotherFileGetsAFreshInode) {
  FdBudget budget(1 << 16);
  Opened root = open_path(dir_.path());
  FdCache cache(root.fd.get(), root.st.st_dev, budget, 1);
  InodeTable table(&cache);
  touch(path(0));
  Opened first = open_path(path(0));
  const ino_t number = first.st.st_ino;
  Inode* old = table.acquire(std::move(first.fd), first.st, false);
  // Evict its fd (capacity 1), so that only its handle remembers the file.
  touch(path(1));
  Opened other = open_path(path(1));
  Inode* other_inode = table.acquire(std::move(other.fd), other.st, false);
  ASSERT_EQ(::unlink(path(0).c_str()), 0);
  // Try to get the same inode number back for a new file (tmpfs and ext4 reuse
  // freed numbers, with a new generation).
  bool reused = false;
  for (int i = 2; i < 2000 && !reused; ++i) {
    touch(path(i));
    struct stat st {};
    ASSERT_EQ(::stat(path(i).c_str(), &st), 0);
    if (st.st_ino == number) {
      Opened fresh = open_path(path(i));
      Inode* now = table.acquire(std::move(fresh.fd), fresh.st, false);
      EXPECT_NE(now, old);
      EXPECT_EQ(table.find(fresh.st.st_dev, number), now);
      EXPECT_EQ(table.size(), 2u);
      table.forget(old, 1);  // the orphan goes; the new entry stays
      EXPECT_EQ(table.find(fresh.st.st_dev, number), now);
      table.forget(now, 1);
      reused = true;
    } else {
      ASSERT_EQ(::unlink(path(i).c_str()), 0);
    }
  }
  if (!reused) table.forget(old, 1);
  table.forget(other_inode, 1);
  EXPECT_EQ(table.size(), 0u);
  if (!reused) GTEST_SKIP() << "the file system did not reuse the inode number";
}

// A file removed underneath while the kernel still holds its inode: its cached
// fd would keep its blocks allocated. The sweep closes it, and only it.
TEST_F(InodeTableTest, ReleaseDeletedClosesOnlyTheFdsOfFilesWithNoNameLeft) {
  FdBudget budget(1 << 16);
  Opened root = open_path(dir_.path());
  FdCache cache(root.fd.get(), root.st.st_dev, budget, 64);
  InodeTable table(&cache);
  touch(path(0));
  touch(path(1));
  Opened gone = open_path(path(0));
  Opened kept = open_path(path(1));
  Inode* gone_inode = table.acquire(std::move(gone.fd), gone.st, false);
  Inode* kept_inode = table.acquire(std::move(kept.fd), kept.st, false);
  ASSERT_EQ(cache.stats().open, 2u);
  EXPECT_EQ(cache.release_deleted(), 0u);
  ASSERT_EQ(::unlink(path(0).c_str()), 0);
  EXPECT_EQ(cache.release_deleted(), 1u);
  EXPECT_EQ(cache.stats().open, 1u);
  EXPECT_EQ(ino_via_fd(*kept_inode), kept.st.st_ino);
  try {
    (void)gone_inode->fd.get();
    ADD_FAILURE() << "a file with no name left was reopened";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ESTALE);
  }
  table.forget(gone_inode, 1);
  table.forget(kept_inode, 1);
}

// Descriptors the cache lets go of are closed after its lock is released, in
// batches: every one of them is closed and given back to the budget all the
// same, through eviction, the deleted-file sweep (more than one batch) and forget.
TEST_F(InodeTableTest, EveryDescriptorLetGoOfIsClosedAndGivenBack) {
  constexpr int kFiles = 150;
  constexpr size_t kCapacity = 100;
  FdBudget budget(1 << 16);
  Opened root = open_path(dir_.path());
  FdCache cache(root.fd.get(), root.st.st_dev, budget, kCapacity);
  InodeTable table(&cache);
  const size_t fds_before = fuse::count_open_fds();
  std::vector<Inode*> inodes;
  for (int i = 0; i < kFiles; ++i) {
    touch(path(i));
    Opened o = open_path(path(i));
    inodes.push_back(table.acquire(std::move(o.fd), o.st, false));
  }
  EXPECT_EQ(cache.stats().open, kCapacity);
  EXPECT_EQ(cache.stats().evictions, kFiles - kCapacity);
  EXPECT_EQ(budget.in_use(), kCapacity);
  EXPECT_EQ(fuse::count_open_fds(), fds_before + kCapacity);

  for (int i = 0; i < kFiles; ++i) ASSERT_EQ(::unlink(path(i).c_str()), 0);
  EXPECT_EQ(cache.release_deleted(), kCapacity);
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(fuse::count_open_fds(), fds_before);
  for (Inode* inode : inodes) table.forget(inode, 1);
  inodes.clear();

  for (int i = 0; i < 10; ++i) {
    touch(path(i));
    Opened o = open_path(path(i));
    inodes.push_back(table.acquire(std::move(o.fd), o.st, false));
  }
  EXPECT_EQ(budget.in_use(), 10u);
  for (Inode* inode : inodes) table.forget(inode, 1);
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(fuse::count_open_fds(), fds_before);
}

TEST_F(InodeTableTest, WithoutACacheEveryInodeKeepsItsFd) {
  InodeTable table;
  touch(path(0));
  Opened o = open_path(path(0));
  const int fd = o.fd.get();
  Inode* inode = table.acquire(std::move(o.fd), o.st, false);
  EXPECT_EQ(inode->fd.get().get(), fd);
  table.forget(inode, 1);
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1);  // closed with the inode
}

}  // namespace

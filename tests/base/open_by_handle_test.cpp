// Reopening by file handle while inode numbers are being reused.
#include "base/open_by_handle.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::base {
namespace {

struct Handle {
  struct file_handle fh;
  unsigned char bytes[MAX_HANDLE_SZ];
};

// Files made and removed in a loop: the inode numbers freed by the test's own
// removals are handed straight to these.
void churn(const std::string& dir, int id, const std::atomic<bool>& stop) {
  for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
    const std::string name = dir + "/c" + std::to_string(id) + "-" + std::to_string(i % 50);
    UniqueFd fd(::open(name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    fd.reset();
    ::unlink(name.c_str());
  }
}

// Commits of the file system's journal, one after another: a file being made
// may wait for one while the kernel holds it half made, which is when a
// lookup meeting it answers ENOMEM, for as long as the wait.
void sync_loop(const std::string& dir, const std::atomic<bool>& stop) {
  const std::string name = dir + "/synced";
  UniqueFd fd(::open(name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  for (char byte = 0; fd && !stop.load(std::memory_order_relaxed); ++byte) {
    if (::pwrite(fd.get(), &byte, 1, 0) != 1 || ::fsync(fd.get()) != 0) break;
  }
}

// A removed file's handle, asked while other files are being made in the same
// directory, is stale: never "out of memory", which the kernel answers
// meanwhile when the lookup meets a new file made with the same number. (On
// ext4 and Linux 6.18 a few hundred of 200,000 raw asks answer ENOMEM.)
TEST(OpenByHandle, AGoneFileIsStaleEvenWhileItsNumberIsBeingReused) {
  test::TempDir dir;
  UniqueFd mount_fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(mount_fd);
  std::atomic<bool> stop{false};
  std::vector<std::thread> churners;
  for (int id = 0; id < 2; ++id) churners.emplace_back(churn, dir.path(), id, std::cref(stop));
  churners.emplace_back(sync_loop, dir.path(), std::cref(stop));
  int stale = 0, reopened = 0, no_handle = 0;
  std::string unexpected;
  for (int i = 0; i < 40000 && unexpected.empty(); ++i) {
    const std::string name = dir.file("g" + std::to_string(i % 10));
    UniqueFd fd(::open(name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    Handle h{};
    h.fh.handle_bytes = MAX_HANDLE_SZ;
    int mount_id = 0;
    if (!fd || ::name_to_handle_at(fd.get(), "", &h.fh, &mount_id, AT_EMPTY_PATH) != 0) {
      no_handle = errno;
      unexpected = std::string("no handle: ") + std::strerror(errno);
      break;
    }
    ::unlink(name.c_str());
    fd.reset();
    UniqueFd again = open_by_handle(mount_fd.get(), &h.fh, O_PATH | O_CLOEXEC);
    if (again) {
      ++reopened;  // file systems that keep a removed inode a while
    } else if (errno == ESTALE) {
      ++stale;
    } else {
      unexpected = std::string("ask ") + std::to_string(i) + ": " + std::strerror(errno);
    }
  }
  stop = true;
  for (auto& t : churners) t.join();
  if (no_handle == EOPNOTSUPP) {
    GTEST_SKIP() << "the file system under TMPDIR has no file handles";
  }
  EXPECT_EQ(unexpected, "");
  EXPECT_GT(stale + reopened, 0);
}

// The asking itself, with answers made up.
TEST(OpenByHandle, ENomemIsAskedAgainUntilAnotherAnswer) {
  int asked = 0;
  UniqueFd fd = ask_while_out_of_memory(
      [&] {
        errno = ++asked <= 20 ? ENOMEM : ESTALE;
        return -1;
      },
      std::chrono::seconds(30));
  EXPECT_FALSE(fd);
  EXPECT_EQ(errno, ESTALE);
  EXPECT_EQ(asked, 21);
}

TEST(OpenByHandle, AnFdOrAnotherErrorIsTheAnswerAtOnce) {
  int asked = 0;
  UniqueFd fd = ask_while_out_of_memory(
      [&] {
        ++asked;
        return ::open("/", O_PATH | O_CLOEXEC);
      },
      std::chrono::seconds(30));
  EXPECT_TRUE(fd);
  EXPECT_EQ(asked, 1);
  asked = 0;
  fd = ask_while_out_of_memory(
      [&] {
        ++asked;
        errno = ESTALE;
        return -1;
      },
      std::chrono::seconds(30));
  EXPECT_FALSE(fd);
  EXPECT_EQ(errno, ESTALE);
  EXPECT_EQ(asked, 1);
}

TEST(OpenByHandle, AShortageThatLastsIsReportedOnceThePatienceIsOver) {
  int asked = 0;
  UniqueFd fd = ask_while_out_of_memory(
      [&] {
        ++asked;
        errno = ENOMEM;
        return -1;
      },
      std::chrono::milliseconds(30));
  EXPECT_FALSE(fd);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_GT(asked, 8);  // asked at once, then after pauses
}

}  // namespace
}  // namespace leasefs::base

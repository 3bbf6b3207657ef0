// base/fd_limit.hpp's reserve_fd_table: the descriptor table grows at once,
// and no descriptor is left open by it.
#include <dirent.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "base/fd_limit.hpp"

namespace leasefs::base {
namespace {

// The table's size, as the kernel reports it ("FDSize:" in /proc/self/status).
size_t fd_table_size() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("FDSize:", 0) == 0) return std::stoul(line.substr(7));
  }
  return 0;
}

size_t open_fds() {
  size_t n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (const dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
  ::closedir(d);
  return n;
}

TEST(FdTable, IsGrownAtOnceAndLeavesNoDescriptorOpen) {
  raise_fd_limit();
  const size_t before = fd_table_size();
  ASSERT_GT(before, 0u);
  const size_t fds = open_fds();
  const size_t want = before * 4;  // a size the table does not have yet
  reserve_fd_table(want);
  EXPECT_GE(fd_table_size(), want);
  EXPECT_EQ(open_fds(), fds);
}

TEST(FdTable, PastTheLimitItIsLeftAsItIs) {
  const size_t limit = raise_fd_limit();
  const size_t before = fd_table_size();
  const size_t fds = open_fds();
  reserve_fd_table(limit + 1);        // a descriptor RLIMIT_NOFILE does not allow
  reserve_fd_table(size_t{1} << 40);  // nor one an int cannot hold
  EXPECT_EQ(fd_table_size(), before);
  EXPECT_EQ(open_fds(), fds);
}

}  // namespace
}  // namespace leasefs::base

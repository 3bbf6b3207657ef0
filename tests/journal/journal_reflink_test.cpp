// The journal clones content with FICLONE where the backing file system shares
// extents (journal/journal.cpp). On a fresh XFS (reflink=1) in a loop file: a
// 4 MiB file whose first MiB is rewritten in a turn leaves a pre-image that
// shares the untouched extents with the file (FIEMAP_EXTENT_SHARED), and undo brings the old
// content back through the mount. The XFS is reached beneath the leasefs mount
// through a bind mount made before it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/control_client.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::test {
namespace {

// Whether some extent of `path` is shared with another file.
bool some_extent_shared(const std::string& path) {
  constexpr unsigned kExtents = 64;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  alignas(fiemap) char buf[sizeof(fiemap) + kExtents * sizeof(fiemap_extent)] = {};
  auto* map = reinterpret_cast<fiemap*>(buf);
  map->fm_length = FIEMAP_MAX_OFFSET;
  map->fm_flags = FIEMAP_FLAG_SYNC;
  map->fm_extent_count = kExtents;
  bool shared = false;
  if (::ioctl(fd, FS_IOC_FIEMAP, map) == 0) {
    for (unsigned i = 0; i < map->fm_mapped_extents; ++i) {
      if (map->fm_extents[i].fe_flags & FIEMAP_EXTENT_SHARED) shared = true;
    }
  }
  ::close(fd);
  return shared;
}

class JournalReflink : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run_sh("command -v mkfs.xfs").exit_code != 0) GTEST_SKIP() << "no mkfs.xfs (xfsprogs)";
    base_ = make_temp_dir("leasefs-reflink-");
    image_ = base_ + "/xfs.img";
    xfs_ = base_ + "/xfs";
    under_ = base_ + "/under";
    RunResult r =
        run_sh("truncate -s 512M " + image_ + " && mkfs.xfs -q -m reflink=1 " + image_ +
               " && mkdir " + xfs_ + " " + under_ + " && mount -o loop " + image_ + " " + xfs_ +
               " && mkdir " + xfs_ + "/root && mount --bind " + xfs_ + " " + under_);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    root_ = xfs_ + "/root";
    sock_ = base_ + "/ctl.sock";
  }
  void TearDown() override {
    if (base_.empty()) return;
    RunOptions o;
    o.timeout_s = 30;
    run_sh(std::string(LEASEFS_BIN) + " unmount " + root_ + " || fusermount3 -uz " + root_ +
               "; umount " + under_ + "; umount " + xfs_,
           o);
    remove_tree(base_);
  }
  std::string base_, image_, xfs_, under_, root_, sock_;
};

TEST_F(JournalReflink, APreImageIsAClonedExtentAndUndoRestoresIt) {
  ASSERT_EQ(run_sh("head -c 4194304 /dev/urandom > " + root_ + "/big.bin").exit_code, 0);
  const std::string before = run_sh("sha256sum < " + root_ + "/big.bin").output;
  RunOptions o;
  o.timeout_s = 30;
  ASSERT_EQ(run_argv({LEASEFS_BIN, "mount", root_, "--socket", sock_}, o).exit_code, 0);
  ControlClient c(sock_);
  ASSERT_TRUE(c.call("start", {{"description", "reflink"}}).value("ok", false));
  const uint64_t turn = c.call("turn")["result"].value("turn", uint64_t{0});
  ASSERT_TRUE(c.call("grant", {{"reason", "rewrite"}}).value("ok", false));
  // Rewrite the first MiB in place, through the mount.
  ASSERT_EQ(
      run_sh("dd if=/dev/zero of=" + root_ + "/big.bin bs=1M count=1 conv=notrunc status=none")
          .exit_code,
      0);
  ASSERT_NE(run_sh("sha256sum < " + root_ + "/big.bin").output, before);

  // The pre-image, beneath the mount.
  const std::string turn_dir = under_ + "/root/.longrun/journal/" + std::to_string(turn);
  std::string blob;
  for (const auto& e : std::filesystem::directory_iterator(turn_dir)) {
    const std::string name = e.path().filename();
    if (name.size() > 1 && name[0] == 'b' && std::filesystem::file_size(e.path()) == 4194304) {
      blob = e.path();
    }
  }
  ASSERT_FALSE(blob.empty()) << "no 4 MiB pre-image in " << turn_dir;
  // The 3 MiB the write did not touch are still one set of blocks for the file
  // and its pre-image: cloned, not copied byte by byte (FICLONE, or
  // copy_file_range, which XFS also serves by sharing extents).
  EXPECT_TRUE(some_extent_shared(blob)) << blob;

  ASSERT_TRUE(c.call("turn").value("ok", false));
  nlohmann::json u = c.call("undo", {{"turn", turn}});
  ASSERT_TRUE(u.value("ok", false)) << u.dump();
  EXPECT_EQ(run_sh("sha256sum < " + root_ + "/big.bin").output, before);
}

}  // namespace
}  // namespace leasefs::test

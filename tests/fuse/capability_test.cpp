// security.capability through the mount. The kernel asks for it before every
// write (libfuse 3.14 has no HANDLE_KILLPRIV_V2), and each inode remembers that a
// file has none so the answer costs no syscall (fuse/op_xattr.cpp). These check
// that the remembered answer never hides a capability set through the mount, that
// a write still drops one (through the mount and underneath), and that user.*
// attributes are untouched by it. Driven with setcap/getcap (libcap2-bin) and
// setfattr/getfattr (attr).
#include <gtest/gtest.h>

#include "tests/support/mounted_fs.hpp"
#include "tests/support/run.hpp"

namespace leasefs::test {
namespace {

class Capability : public ::testing::Test {
 protected:
  // getcap's line for `path`, without the path ("" when it has none).
  std::string getcap(const std::string& path) {
    auto r = fs.sh("getcap " + path);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    auto space = r.output.find(' ');
    return space == std::string::npos ? "" : r.output.substr(space + 1);
  }
  MountedFs fs;
};

TEST_F(Capability, SetThroughTheMountAfterWritesIsSeenThroughItAndUnderneath) {
  fs.grant();
  // Two writes: the first asks the file underneath, the second is answered from
  // the inode's remembered "none".
  auto r = fs.sh("set -e; echo a > f; echo b >> f; setcap cap_net_raw+ep f");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(getcap("f"), "cap_net_raw=ep\n");
  EXPECT_EQ(getcap(fs.backing() + "/f"), "cap_net_raw=ep\n");
}

TEST_F(Capability, AWriteThroughTheMountDropsIt) {
  fs.grant();
  auto r = fs.sh("set -e; echo a > f; echo b >> f; setcap cap_net_raw+ep f; echo c >> f");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(getcap("f"), "");
  EXPECT_EQ(getcap(fs.backing() + "/f"), "");
  r = fs.sh("cat f");
  EXPECT_EQ(r.output, "a\nb\nc\n");
}

TEST_F(Capability, RemovedThroughTheMountThenSetAgain) {
  fs.grant();
  auto r = fs.sh("set -e; echo a > f; setcap cap_net_raw+ep f; setcap -r f; echo b >> f");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(getcap("f"), "");
  r = fs.sh("set -e; setcap cap_chown+ep f");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(getcap("f"), "cap_chown=ep\n");
  EXPECT_EQ(getcap(fs.backing() + "/f"), "cap_chown=ep\n");
}

// Only a mount that is not over the root can see this: a capability set
// underneath after the inode remembered "none". The next write through the mount
// still drops it, because the write underneath does (the file system below kills
// the capability on write whoever writes).
TEST_F(Capability, SetUnderneathAfterTheMountRememberedNoneIsDroppedByTheNextWrite) {
  fs.grant();
  auto r = fs.sh("set -e; echo a > f; echo b >> f");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = fs.sh("setcap cap_net_raw+ep " + fs.backing() + "/f");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(getcap(fs.backing() + "/f"), "cap_net_raw=ep\n");
  r = fs.sh("echo c >> f");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(getcap(fs.backing() + "/f"), "");
}

TEST_F(Capability, UserAttributesSurviveWritesAndCapabilityChanges) {
  fs.grant();
  auto r = fs.sh(
      "set -e; echo a > f; setfattr -n user.k -v v1 f; echo b >> f; setcap cap_net_raw+ep f; "
      "echo c >> f; setfattr -n user.j -v v2 f; getfattr --absolute-names -d f");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("user.j=\"v2\"\nuser.k=\"v1\"\n"), std::string::npos) << r.output;
  r = fs.sh("getfattr --absolute-names -d " + fs.backing() + "/f");
  EXPECT_NE(r.output.find("user.j=\"v2\"\nuser.k=\"v1\"\n"), std::string::npos) << r.output;
  r = fs.sh("set -e; setfattr -x user.k f; getfattr --absolute-names -d f");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("user.k"), std::string::npos) << r.output;
}

TEST_F(Capability, SetcapWithoutALeaseIsRefusedAndChangesNothing) {
  fs.grant();
  ASSERT_EQ(fs.sh("set -e; echo a > f; echo b >> f").exit_code, 0);
  fs.revoke();
  auto r = fs.sh("setcap cap_net_raw+ep f");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_EQ(getcap("f"), "");
  EXPECT_EQ(getcap(fs.backing() + "/f"), "");
}

}  // namespace
}  // namespace leasefs::test

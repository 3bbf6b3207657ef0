// `.longrun` has one name (fuse/longrun_identity.hpp): with an unscoped lease, the
// agent's uid cannot write `.longrun` or its files through another name made
// before the mount — a hard link, a bind mount, a symlink.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tests/security/fileplane_support.hpp"

namespace leasefs::test::fileplane {
namespace {

constexpr const char* kState = "{\"task\":\"t\"}\n";

class LongrunAlias : public ::testing::Test {
 protected:
  explicit LongrunAlias(fuse::FsOptions options = {}) : fs_(MountedFsOptions{options}) {}
  void SetUp() override {
    // Files the agent could write by mode and ownership: only the gate refuses.
    auto r =
        in_backing(fs_, std::string("mkdir -p .longrun src; printf '%s' '") + kState +
                            "' > .longrun/state.json; echo log > .longrun/audit.log; "
                            "chown -R 65534:65534 . ; chmod 666 .longrun/*; chmod 777 .longrun");
    ASSERT_TRUE(r.ok()) << r.output;
  }
  void TearDown() override {
    if (bound_) ::umount2((fs_.backing() + "/bound").c_str(), MNT_DETACH);
  }
  // Every write the agent could try on `path` (through the mount); each must fail.
  void expect_unwritable(const std::string& rel) {
    const std::string p = fs_.mnt() + "/" + rel;
    EXPECT_EQ(as_agent([&] { return err_of(::open(p.c_str(), O_WRONLY | O_CLOEXEC)); }), EACCES)
        << rel;
    EXPECT_EQ(as_agent([&] { return err_of(::open(p.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC)); }),
              EACCES)
        << rel;
    EXPECT_EQ(as_agent([&] { return err_of(::truncate(p.c_str(), 0)); }), EACCES) << rel;
    EXPECT_EQ(as_agent([&] { return err_of(::chmod(p.c_str(), 0600)); }), EACCES) << rel;
    EXPECT_EQ(as_agent([&] { return err_of(::setxattr(p.c_str(), "user.x", "1", 1, 0)); }), EACCES)
        << rel;
  }
  void expect_longrun_intact() {
    EXPECT_EQ(read_file(fs_.backing() + "/.longrun/state.json"), kState);
    EXPECT_EQ(read_file(fs_.backing() + "/.longrun/audit.log"), "log\n");
    struct stat st {};
    ASSERT_EQ(::stat((fs_.backing() + "/.longrun/state.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0666u);
  }
  MountedFs fs_;
  bool bound_ = false;
};

TEST_F(LongrunAlias, HardLinkMadeBeforeTheMountCannotBeWritten) {
  ASSERT_TRUE(in_backing(fs_,
                         "ln .longrun/state.json state-link && "
                         "ln .longrun/audit.log src/audit-link")
                  .ok());
  fs_.grant();  // an unscoped lease
  expect_unwritable("state-link");
  expect_unwritable("src/audit-link");
  expect_longrun_intact();
  // An ordinary file beside it stays writable under the lease.
  EXPECT_TRUE(fs_.sh("echo ok > src/other", kAgent).ok());
}

TEST_F(LongrunAlias, BindMountMadeBeforeTheMountCannotBeWritten) {
  const std::string bound = fs_.backing() + "/bound";
  ASSERT_EQ(::mkdir(bound.c_str(), 0777), 0);
  ASSERT_EQ(
      ::mount((fs_.backing() + "/.longrun").c_str(), bound.c_str(), nullptr, MS_BIND, nullptr), 0);
  bound_ = true;
  fs_.grant();
  expect_unwritable("bound/state.json");
  expect_unwritable("bound/audit.log");
  const std::string fresh = fs_.mnt() + "/bound/new";
  EXPECT_EQ(as_agent([&] { return err_of(::open(fresh.c_str(), O_CREAT | O_WRONLY, 0644)); }),
            EACCES);
  expect_longrun_intact();
  EXPECT_NE(::access((fs_.backing() + "/.longrun/new").c_str(), F_OK), 0);
}

TEST_F(LongrunAlias, SymlinksLeadBackToTheProtectedName) {
  ASSERT_TRUE(
      in_backing(fs_, "ln -s .longrun dirlink && ln -s ../.longrun/state.json src/filelink").ok());
  fs_.grant();
  expect_unwritable("dirlink/state.json");
  expect_unwritable("src/filelink");
  expect_longrun_intact();
}

// Mounted as the daemon mounts over the root with nobody inside
// (FsOptions::stable_names): .longrun's hard-linked files are listed once.
class LongrunAliasStable : public LongrunAlias {
 protected:
  LongrunAliasStable() : LongrunAlias(fuse::FsOptions{.stable_names = true}) {}
  // `n` more files in .longrun, as a long session's journal leaves behind.
  void fill_longrun(int n) {
    ASSERT_TRUE(in_backing(fs_, "mkdir -p .longrun/journal/7 && cd .longrun/journal/7 && seq 1 " +
                                    std::to_string(n) + " | sed 's/^/b/' | xargs touch")
                    .ok());
  }
};

// A journal past the listing's old bound (4,096 entries) made every file with
// two names in the tree count as .longrun's: `ln` then a write was refused.
TEST_F(LongrunAliasStable, AHardLinkInTheTreeStaysWritableWhenLongrunHoldsManyFiles) {
  fill_longrun(5000);
  fs_.grant();
  EXPECT_TRUE(fs_.sh("echo one > src/a && ln src/a src/b && echo two >> src/b", kAgent).ok());
  EXPECT_EQ(read_file(fs_.backing() + "/src/a"), "one\ntwo\n");
}

TEST_F(LongrunAliasStable, HardLinkMadeBeforeTheMountCannotBeWrittenWhenLongrunHoldsManyFiles) {
  fill_longrun(5000);
  ASSERT_TRUE(in_backing(fs_,
                         "ln .longrun/state.json state-link && "
                         "ln .longrun/audit.log src/audit-link")
                  .ok());
  fs_.grant();
  expect_unwritable("state-link");
  expect_unwritable("src/audit-link");
  expect_longrun_intact();
}

}  // namespace
}  // namespace leasefs::test::fileplane

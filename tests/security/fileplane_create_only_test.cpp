// A grant with only the create class creates files; it never truncates one that
// exists. open(O_CREAT|O_TRUNC) reaches the daemon either as an OPEN with O_TRUNC
// (the kernel knows the name) or as a CREATE (the kernel believes the name is
// free, e.g. its negative entry is stale): the daemon judges which of the two it
// is doing when it does it, and truncating existing content is a write.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/security/fileplane_support.hpp"

namespace leasefs::test::fileplane {
namespace {

constexpr const char* kContent = "existing content\n";

// The agent's open(O_CREAT|O_TRUNC|O_WRONLY) of `path`: 0 or errno.
int create_truncating(const std::string& path) {
  return as_agent([&] {
    int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    ::close(fd);
    return 0;
  });
}

// The agent looks `name` up through the mount while it does not exist (the kernel
// keeps the negative entry), then root writes it underneath.
void appears_behind_a_negative_entry(MountedFs& fs, const std::string& name) {
  EXPECT_EQ(as_agent([&] {
              struct stat st {};
              return ::stat((fs.mnt() + "/" + name).c_str(), &st) == 0 ? 0 : errno;
            }),
            ENOENT);
  ASSERT_TRUE(in_backing(fs, "printf '" + std::string(kContent) + "' > " + name +
                                 "; chown 65534:65534 " + name)
                  .ok());
}

class CreateOnlyGrant : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::chmod(fs.backing().c_str(), 0777), 0);
    ASSERT_TRUE(
        in_backing(fs, "printf '" + std::string(kContent) + "' > known; chown 65534:65534 known")
            .ok());
    fs.publish(leased(1, {{{}, gate::kClassCreate}}));
  }
  MountedFs fs;
};

TEST_F(CreateOnlyGrant, OpenWithTruncateOfAKnownFileIsRefused) {
  struct stat st {};
  ASSERT_EQ(::stat((fs.mnt() + "/known").c_str(), &st), 0);  // the kernel knows the name
  EXPECT_EQ(create_truncating(fs.mnt() + "/known"), EACCES);
  EXPECT_EQ(read_file(fs.backing() + "/known"), kContent);
}

TEST_F(CreateOnlyGrant, CreateThatMeetsAnExistingFileDoesNotTruncateIt) {
  appears_behind_a_negative_entry(fs, "late");
  EXPECT_EQ(create_truncating(fs.mnt() + "/late"), EACCES);
  EXPECT_EQ(read_file(fs.backing() + "/late"), kContent);
}

TEST_F(CreateOnlyGrant, CreateExclusiveThatMeetsAnExistingFileFailsWithEexist) {
  appears_behind_a_negative_entry(fs, "late");
  EXPECT_EQ(as_agent([&] {
              int fd = ::open((fs.mnt() + "/late").c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
                              0644);
              if (fd < 0) return errno;
              ::close(fd);
              return 0;
            }),
            EEXIST);
  EXPECT_EQ(read_file(fs.backing() + "/late"), kContent);
}

TEST_F(CreateOnlyGrant, NewFilesAreStillCreated) {
  EXPECT_EQ(create_truncating(fs.mnt() + "/new"), 0);
  struct stat st {};
  ASSERT_EQ(::stat((fs.mnt() + "/new").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kAgent);
  EXPECT_EQ(st.st_size, 0);
}

TEST(CreateAndWriteGrant, CreateThatMeetsAnExistingFileTruncatesItAsNatively) {
  MountedFs fs;
  ASSERT_EQ(::chmod(fs.backing().c_str(), 0777), 0);
  fs.publish(leased(1, {{{}, gate::kClassCreate | gate::kClassWrite}}));
  appears_behind_a_negative_entry(fs, "late");
  EXPECT_EQ(create_truncating(fs.mnt() + "/late"), 0);
  EXPECT_EQ(read_file(fs.backing() + "/late"), "");
  struct stat st {};  // and the kernel was told so
  ASSERT_EQ(::stat((fs.mnt() + "/late").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
}

TEST(CreateAndWriteGrant, CreateThatMeetsASymlinkFollowsNothingOutOfTheRoot) {
  MountedFs fs;
  ASSERT_EQ(::chmod(fs.backing().c_str(), 0777), 0);
  const std::string outside = fs.base() + "/outside";
  ASSERT_TRUE(in_backing(fs, "printf '" + std::string(kContent) + "' > " + outside +
                                 "; chmod 666 " + outside)
                  .ok());
  fs.publish(leased(1, {{}}));
  EXPECT_EQ(as_agent([&] {
              struct stat st {};
              return ::stat((fs.mnt() + "/link").c_str(), &st) == 0 ? 0 : errno;
            }),
            ENOENT);
  ASSERT_TRUE(in_backing(fs, "ln -s " + outside + " link").ok());
  EXPECT_NE(create_truncating(fs.mnt() + "/link"), 0);
  EXPECT_EQ(read_file(outside), kContent);
}

}  // namespace
}  // namespace leasefs::test::fileplane

// The signing key's file: made 0600, never replaced, and refused when someone
// other than its owner could have written or read it.
#include "signing/key_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "signing/verifier_key.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::signing {
namespace {

class KeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the key must be root's";
    ::chmod(dir.path().c_str(), 0755);
  }
  test::TempDir dir{"leasefs-key-"};
  std::string path = dir.path() + "/keys/audit-signing.key";
};

TEST_F(KeyFileTest, MadeRootOnlyAndNeverReplaced) {
  const Ed25519Key key = Ed25519Key::generate();
  ASSERT_EQ(create_key_file(path, key, "leasefs/test"), std::nullopt);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 0u);
  ASSERT_EQ(::stat((path + ".pub").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  std::string pub;
  std::getline(std::ifstream(path + ".pub"), pub);
  EXPECT_EQ(pub, VerifierKey::of("leasefs/test", key.public_key()).text());

  const LoadedKey loaded = load_key_file(path);
  ASSERT_TRUE(loaded.key) << loaded.why;
  EXPECT_EQ(loaded.key->public_key(), key.public_key());

  const auto again = create_key_file(path, Ed25519Key::generate(), "leasefs/test");
  ASSERT_TRUE(again);
  EXPECT_NE(again->find("never replaced"), std::string::npos) << *again;
  EXPECT_EQ(load_key_file(path).key->public_key(), key.public_key());
}

TEST_F(KeyFileTest, MissingSaysSo) {
  const LoadedKey loaded = load_key_file(path);
  EXPECT_FALSE(loaded.key);
  EXPECT_TRUE(loaded.missing);
  EXPECT_EQ(loaded.why, "no key at " + path);
}

TEST_F(KeyFileTest, ReadableByOthersIsRefused) {
  ASSERT_EQ(create_key_file(path, Ed25519Key::generate(), "leasefs/test"), std::nullopt);
  for (mode_t mode : {0640, 0604, 0620, 0644}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    const LoadedKey loaded = load_key_file(path);
    EXPECT_FALSE(loaded.key) << std::oct << mode;
    EXPECT_NE(loaded.why.find("lets group or others read or write it"), std::string::npos)
        << loaded.why;
  }
}

TEST_F(KeyFileTest, SomeoneElsesIsRefused) {
  ASSERT_EQ(create_key_file(path, Ed25519Key::generate(), "leasefs/test"), std::nullopt);
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  const LoadedKey loaded = load_key_file(path);
  EXPECT_FALSE(loaded.key);
  EXPECT_NE(loaded.why.find("belongs to uid 65534, not root"), std::string::npos) << loaded.why;
}

TEST_F(KeyFileTest, ASymlinkIsRefused) {
  ASSERT_EQ(create_key_file(path, Ed25519Key::generate(), "leasefs/test"), std::nullopt);
  const std::string link = dir.path() + "/keys/link.key";
  ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
  const LoadedKey loaded = load_key_file(link);
  EXPECT_FALSE(loaded.key);
  EXPECT_NE(loaded.why.find("symlink"), std::string::npos) << loaded.why;
}

TEST_F(KeyFileTest, ADirectoryOthersCanWriteIsRefused) {
  ASSERT_EQ(create_key_file(path, Ed25519Key::generate(), "leasefs/test"), std::nullopt);
  ASSERT_EQ(::chmod((dir.path() + "/keys").c_str(), 0777), 0);
  LoadedKey loaded = load_key_file(path);
  EXPECT_FALSE(loaded.key);
  EXPECT_NE(loaded.why.find("writable by others"), std::string::npos) << loaded.why;
  // Sticky, as /tmp is: nobody else can replace root's entries there.
  ASSERT_EQ(::chmod((dir.path() + "/keys").c_str(), 01777), 0);
  loaded = load_key_file(path);
  EXPECT_TRUE(loaded.key) << loaded.why;
  // A directory another user owns.
  ASSERT_EQ(::chmod((dir.path() + "/keys").c_str(), 0755), 0);
  ASSERT_EQ(::chown((dir.path() + "/keys").c_str(), 65534, 65534), 0);
  loaded = load_key_file(path);
  EXPECT_FALSE(loaded.key);
  EXPECT_NE(loaded.why.find("belongs to uid 65534"), std::string::npos) << loaded.why;
}

TEST_F(KeyFileTest, NotAKeyIsSaid) {
  ::mkdir((dir.path() + "/keys").c_str(), 0755);
  { std::ofstream(path) << "hello\n"; }
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  const LoadedKey loaded = load_key_file(path);
  EXPECT_FALSE(loaded.key);
  EXPECT_NE(loaded.why.find("not an Ed25519 private key"), std::string::npos) << loaded.why;
}

}  // namespace
}  // namespace leasefs::signing

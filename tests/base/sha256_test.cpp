#include "base/sha256.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

namespace leasefs::base {
namespace {

// FIPS 180-2, appendix B.
constexpr char kAbc[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr char kEmpty[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr char kMillionA[] = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex("abc"), kAbc);
  EXPECT_EQ(sha256_hex(""), kEmpty);
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), kMillionA);
}

// The digest context is reused from one hash to the next on a thread: nothing of
// one may reach the next, whatever their order and size.
TEST(Sha256, EachHashStartsAfreshOnTheSameThread) {
  const std::string big(1000000, 'a');
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(sha256_hex(big), kMillionA);
    EXPECT_EQ(sha256_hex("abc"), kAbc);
    EXPECT_EQ(sha256_hex(""), kEmpty);
  }
}

TEST(Sha256, ThreadsHashingAtOnceEachGetTheirOwnDigest) {
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&wrong, t] {
      for (int i = 0; i < 2000; ++i) {
        if (sha256_hex((i + t) % 2 ? "abc" : "") != ((i + t) % 2 ? kAbc : kEmpty)) ++wrong[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

TEST(Sha256, AFileIsHashedWholeFromOffsetZero) {
  char name[] = "/tmp/leasefs-sha256-XXXXXX";
  const int fd = ::mkstemp(name);
  ASSERT_GE(fd, 0);
  ::unlink(name);
  const std::string content(1000000, 'a');  // more than one read buffer
  ASSERT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  // The file offset is at the end: the hash reads from 0 all the same.
  EXPECT_EQ(sha256_hex_fd(fd), kMillionA);
  EXPECT_EQ(sha256_hex("abc"), kAbc);  // a file hash leaves nothing behind either
  EXPECT_EQ(sha256_hex_fd(fd), kMillionA);
  ::close(fd);
}

TEST(Sha256, AnUnreadableDescriptorGivesNoHash) {
  EXPECT_EQ(sha256_hex_fd(-1), "");
  const int fd = ::open("/tmp", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(sha256_hex_fd(fd), "");  // EISDIR
  ::close(fd);
  EXPECT_EQ(sha256_hex("abc"), kAbc);  // and the next hash is whole
}

}  // namespace
}  // namespace leasefs::base

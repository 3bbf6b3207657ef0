#include "gate/glob.hpp"

#include <gtest/gtest.h>

namespace leasefs::gate {
namespace {

TEST(Glob, StarStaysInOneComponent) {
  EXPECT_TRUE(glob_match("src/*.c", "src/a.c"));
  EXPECT_FALSE(glob_match("src/*.c", "src/x/a.c"));
  EXPECT_FALSE(glob_match("*", "a/b"));
  EXPECT_TRUE(glob_match("*", "a"));
}

TEST(Glob, QuestionMarkIsOneCharacterButNotSlash) {
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("a?c", "a/c"));
  EXPECT_FALSE(glob_match("a?c", "ac"));
}

TEST(Glob, DoubleStarSpansComponents) {
  EXPECT_TRUE(glob_match("src/**", "src/a/b/c.txt"));
  EXPECT_TRUE(glob_match("src/**", "src"));
  EXPECT_FALSE(glob_match("src/**", "srcx/a"));
  EXPECT_TRUE(glob_match("**/*.c", "a.c"));
  EXPECT_TRUE(glob_match("**/*.c", "x/y/a.c"));
  EXPECT_FALSE(glob_match("**/b.c", "ab.c"));
  EXPECT_TRUE(glob_match("**/b.c", "a/b.c"));
  EXPECT_TRUE(glob_match("a/**/z", "a/z"));
  EXPECT_TRUE(glob_match("a/**/z", "a/b/c/z"));
  EXPECT_FALSE(glob_match("a/**/z", "a/b/c/zz"));
  EXPECT_TRUE(glob_match("**", "anything/at/all"));
}

TEST(Glob, ExactAndLeadingSlash) {
  EXPECT_TRUE(glob_match("README.md", "README.md"));
  EXPECT_TRUE(glob_match("/README.md", "README.md"));
  EXPECT_TRUE(glob_match("./README.md", "README.md"));
  EXPECT_FALSE(glob_match("README.md", "docs/README.md"));
}

TEST(Glob, TrailingSlashNamesADirectoryAndEverythingBeneath) {
  EXPECT_TRUE(glob_match("src/", "src"));
  EXPECT_TRUE(glob_match("src/", "src/a/b.c"));
  EXPECT_FALSE(glob_match("src/", "srcx/a"));
  EXPECT_TRUE(glob_match("src/*/", "src/a/b.c"));
  EXPECT_FALSE(glob_match("src/*/", "src"));
  EXPECT_FALSE(glob_match("/", "a"));
}

TEST(Glob, DotFilesAreOrdinaryNames) {
  EXPECT_TRUE(glob_match("*", ".env"));
  EXPECT_TRUE(glob_match("src/*", "src/.hidden"));
  EXPECT_TRUE(glob_match("src/**", "src/.git/config"));
  EXPECT_FALSE(glob_match("?env", ".x/env"));
}

TEST(Glob, BareDirectoryNameIsOnlyTheDirectory) {
  EXPECT_TRUE(glob_match("src", "src"));
  EXPECT_FALSE(glob_match("src", "src/a.c"));
}

}  // namespace
}  // namespace leasefs::gate

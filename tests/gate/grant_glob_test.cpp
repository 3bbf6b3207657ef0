#include "gate/grant_glob.hpp"

#include <gtest/gtest.h>

namespace leasefs::gate {
namespace {

constexpr std::string_view kRoot = "/srv/proj";

std::string glob_of(std::string_view text) {
  GrantGlob g = normalize_grant_glob(text, kRoot);
  EXPECT_TRUE(g.problem.empty()) << text << ": " << g.problem;
  return g.glob;
}

std::string problem_of(std::string_view text) {
  GrantGlob g = normalize_grant_glob(text, kRoot);
  EXPECT_TRUE(g.glob.empty()) << text << " became " << g.glob;
  return g.problem;
}

TEST(GrantGlob, EmptyAndDotComponentsAreDropped) {
  EXPECT_EQ(glob_of("a//b"), "a/b");
  EXPECT_EQ(glob_of("./a"), "a");
  EXPECT_EQ(glob_of("././a/./b"), "a/b");
  EXPECT_EQ(glob_of("src/*.c"), "src/*.c");
  EXPECT_EQ(glob_of("src//"), "src/");  // still a directory
  EXPECT_EQ(glob_of("**"), "**");
}

TEST(GrantGlob, AnAbsolutePathUnderTheRootIsMadeRelative) {
  EXPECT_EQ(glob_of("/srv/proj/src/a.c"), "src/a.c");
  EXPECT_EQ(glob_of("/srv/proj//src/"), "src/");
}

TEST(GrantGlob, NothingOutsideTheRootWhateverTheSpelling) {
  for (const char* p : {"../outside", "sub/../../x", "sub/..", "a/../b", "/srv/proj/../x"}) {
    EXPECT_NE(problem_of(p).find("'..' is not allowed"), std::string::npos) << p;
  }
  for (const char* p : {"/etc/passwd", "/srv/projx/a", "/srv", "/"}) {
    EXPECT_NE(problem_of(p).find("is outside the root /srv/proj"), std::string::npos) << p;
  }
  EXPECT_NE(normalize_grant_glob("/srv/proj/a", "").problem, "");  // no root: nothing absolute
}

TEST(GrantGlob, TheRootItselfIsNotAPath) {
  for (const char* p : {".", "./", ".//", "/srv/proj", "/srv/proj/"}) {
    EXPECT_NE(problem_of(p).find("names the root itself"), std::string::npos) << p;
  }
  EXPECT_NE(problem_of("").find("empty"), std::string::npos);
}

TEST(GrantGlob, SyntaxTheMatcherDoesNotHaveIsRefusedSayingWhatIs) {
  const std::string stars = problem_of("src/***");
  EXPECT_NE(stars.find("'***' is not a glob"), std::string::npos) << stars;
  const std::string braces = problem_of("{a,b}");
  EXPECT_NE(braces.find("braces are not supported; grant each path with its own --path"),
            std::string::npos)
      << braces;
  EXPECT_NE(problem_of("src/[abc").find("brackets (character classes) are not supported"),
            std::string::npos);
  EXPECT_NE(problem_of("src/a]").find("brackets"), std::string::npos);
  EXPECT_NE(braces.find("supported: * within one name, ? for one character, ** for any depth"),
            std::string::npos)
      << braces;
}

}  // namespace
}  // namespace leasefs::gate

// The names generations behind the path caches (fuse/path_cache.hpp): which
// changes make a cached directory path be resolved again. A directory path kept
// past a change that moved the directory is a scope escape, so every way a
// rename can fail to know what it moved must bump directories' generation.
#include <gtest/gtest.h>

#include <memory>

#include "fuse/path_cache.hpp"

namespace leasefs::fuse {
namespace {

using Reach = NamesChanging::Reach;

TEST(NamesGeneration, AnUnlinkOrALinkLeavesDirectoryPathsAndNotFilePaths) {
  NamesGeneration names;
  const uint64_t files = names.now(), dirs = names.dirs();
  { NamesChanging unlink(names, Reach::kFiles); }
  EXPECT_GT(names.now(), files);
  EXPECT_EQ(names.dirs(), dirs);
}

TEST(NamesGeneration, AnRmdirMakesDirectoryPathsResolveAgain) {
  NamesGeneration names;
  const uint64_t dirs = names.dirs();
  { NamesChanging rmdir(names, Reach::kDirectories); }
  EXPECT_GT(names.dirs(), dirs);
}

TEST(NamesGeneration, ARenameThatSawOnlyFilesAndRanAloneLeavesDirectoryPaths) {
  NamesGeneration names;
  const uint64_t files = names.now(), dirs = names.dirs();
  {
    NamesChanging rename(names, Reach::kDirectories);
    rename.saw_only_files(true);
  }
  EXPECT_GT(names.now(), files);
  EXPECT_EQ(names.dirs(), dirs);
}

TEST(NamesGeneration, ARenameThatSawADirectoryOrNothingMakesDirectoryPathsResolveAgain) {
  NamesGeneration names;
  uint64_t dirs = names.dirs();
  { NamesChanging rename(names, Reach::kDirectories); }  // never told what it saw
  EXPECT_GT(names.dirs(), dirs);
  dirs = names.dirs();
  {
    NamesChanging rename(names, Reach::kDirectories);
    rename.saw_only_files(true);
    rename.saw_only_files(false);  // a second attempt saw a directory
  }
  EXPECT_GT(names.dirs(), dirs);
}

// The kinds a rename saw may be stale when another change overlapped it: an
// unlink and a mkdir can turn the file it saw into a directory before it runs.
TEST(NamesGeneration, ARenameOverlappingAnotherChangeMakesDirectoryPathsResolveAgain) {
  NamesGeneration names;
  {  // another change under way when the rename began, ending after it
    auto unlink = std::make_unique<NamesChanging>(names, Reach::kFiles);
    const uint64_t dirs = names.dirs();
    {
      NamesChanging rename(names, Reach::kDirectories);
      rename.saw_only_files(true);
    }
    EXPECT_GT(names.dirs(), dirs);
    unlink.reset();
  }
  {  // under way when it began, ended while it ran
    auto unlink = std::make_unique<NamesChanging>(names, Reach::kFiles);
    const uint64_t dirs = names.dirs();
    {
      NamesChanging rename(names, Reach::kDirectories);
      unlink.reset();
      rename.saw_only_files(true);
    }
    EXPECT_GT(names.dirs(), dirs);
  }
  {  // began and ended while it ran
    const uint64_t dirs = names.dirs();
    {
      NamesChanging rename(names, Reach::kDirectories);
      { NamesChanging unlink(names, Reach::kFiles); }
      rename.saw_only_files(true);
    }
    EXPECT_GT(names.dirs(), dirs);
  }
  {  // the daemon's own change underneath (undo) while it ran
    const uint64_t dirs = names.dirs();
    {
      NamesChanging rename(names, Reach::kDirectories);
      names.bump();
      const uint64_t after_bump = names.dirs();
      rename.saw_only_files(true);
      EXPECT_EQ(after_bump, dirs + 1);
    }
    EXPECT_EQ(names.dirs(), dirs + 2);
  }
  {  // one that ended before it began does not count
    { NamesChanging unlink(names, Reach::kFiles); }
    const uint64_t dirs = names.dirs();
    {
      NamesChanging rename(names, Reach::kDirectories);
      rename.saw_only_files(true);
    }
    EXPECT_EQ(names.dirs(), dirs);
  }
}

}  // namespace
}  // namespace leasefs::fuse

// A grant's scope is about the effect (gate/effect.hpp), and every glob shape
// means exactly what DESIGN.md ("Path globs") says, for every mutating op.
//
// The table test mounts once per glob shape and, for each op and each path the
// shape does or does not cover, reseeds the backing tree (entry timeouts are 0 so
// the kernel does not remember the previous tree), tries the op as the agent's
// uid through the mount, and checks the errno, and for a refusal that nothing
// changed underneath.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "tests/security/fileplane_ops.hpp"
#include "tests/security/fileplane_support.hpp"

namespace leasefs::test::fileplane {
namespace {

namespace stdfs = std::filesystem;

MountedFsOptions uncached() {
  MountedFsOptions o;
  o.fs.timeout = 0;
  return o;
}

// The tree every row starts from, written directly (a row reseeds it, so this
// stays in-process). Owned by the agent, so only the gate refuses.
void reseed(const MountedFs& fs) {
  reseed_tree(fs, {"src", "src/sub", "src/sub/deep", "src/e", "src/sub/e2", "docs", "docs/e3"},
              {"src/a.c", "src/b.h", "src/.hidden", "src/sub/c.c", "src/sub/deep/d.c", "docs/x.md",
               "top.c", ".env"});
  if (::testing::Test::HasFatalFailure()) return;
  const std::string b = fs.backing() + "/";
  auto own = [](const std::string& p) { (void)!::lchown(p.c_str(), kAgent, 65534); };
  ::mkdir((b + ".longrun").c_str(), 0755);
  int fd =
      ::open((b + ".longrun/state.json").c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "{}\n", 3), 3);
  ::close(fd);
  own(b + ".longrun");
  own(b + ".longrun/state.json");
}

struct Shape {
  const char* name;
  std::vector<std::string> patterns;
  // Paths covered (in) or not (out), by kind. Files and dirs exist in the seed
  // tree; new names do not.
  std::vector<std::string> files_in, files_out;
  std::vector<std::string> new_in, new_out;
  std::vector<std::string> dirs_in, dirs_out;  // empty directories
  // New names out of scope in a directory the globs reach into: a create there
  // makes a temporary sibling (gate/temp_sibling.hpp); every other op is refused.
  std::vector<std::string> new_temp = {};
};

const Shape kShapes[] = {
    {"Exact",
     {"src/a.c", "src/n.c", "src/e"},
     {"src/a.c"},
     {"src/b.h", "src/sub/c.c", "top.c"},
     {"src/n.c"},
     {"src/sub/n.c", "n.c"},
     {"src/e"},
     {"src/sub/e2", "docs/e3"},
     {"src/m.c"}},
    {"Star",
     {"src/*"},
     {"src/a.c", "src/b.h", "src/.hidden"},
     {"src/sub/c.c", "docs/x.md", "top.c"},
     {"src/n.c", "src/.n"},
     {"src/sub/n.c", "n.c"},
     {"src/e"},
     {"src/sub/e2", "docs/e3"}},
    {"StarSuffix",
     {"src/*.c"},
     {"src/a.c"},
     {"src/b.h", "src/sub/c.c", "top.c"},
     {"src/n.c", "src/.c"},
     {"src/sub/n.c", "n.c"},
     {},
     {"src/e"},
     {"src/n.h"}},
    {"Question",
     {"src/?.c"},
     {"src/a.c"},
     {"src/b.h", "src/sub/c.c"},
     {"src/n.c"},
     {"src/sub/n.c"},
     {},
     {"src/e"},
     {"src/nn.c", "src/.c"}},
    {"DoubleStar",
     {"src/**"},
     {"src/a.c", "src/.hidden", "src/sub/c.c", "src/sub/deep/d.c"},
     {"docs/x.md", "top.c"},
     {"src/n.c", "src/sub/deep/n.c"},
     {"n.c", "docs/n.md", "srcx"},
     {"src/e", "src/sub/e2"},
     {"docs/e3"}},
    {"DoubleStarSuffix",
     {"**/*.c"},
     {"src/a.c", "src/sub/c.c", "top.c", "src/sub/deep/d.c"},
     {"src/b.h", "docs/x.md"},
     {"n.c", "docs/n.c"},
     {},
     {},
     {"src/e", "docs/e3"},
     {"docs/n.md", "src/n.h"}},
    {"TrailingSlash",
     {"src/sub/"},
     {"src/sub/c.c", "src/sub/deep/d.c"},
     {"src/a.c", "docs/x.md"},
     {"src/sub/n.c", "src/sub/deep/n.c"},
     {"src/n.c", "src/subx"},
     {"src/sub/e2"},
     {"src/e"}},
    {"DirectoryOnly",
     {"src/sub", "src/e"},
     {},
     {"src/sub/c.c", "src/a.c"},
     {},
     {"src/sub/n.c"},
     {"src/e"},
     {"src/sub/e2"},
     {"src/n.c"}},
    {"DotFiles",
     {".*"},
     {".env"},
     {"src/.hidden", "top.c", ".longrun/state.json"},
     {".n"},
     {"src/.n", ".longrun/n"},
     {},
     {"src/e"},
     {"n"}},
};

class GlobShape : public ::testing::TestWithParam<const Shape*> {};

TEST_P(GlobShape, EveryMutatingOpFollowsTheGlob) {
  const Shape& shape = *GetParam();
  MountedFs fs(uncached());
  fs.publish(leased(1, {{shape.patterns}}));
  const std::string m = fs.mnt() + "/";

  auto run = [&](const std::string& what, const std::function<int()>& fn, bool allowed) {
    reseed(fs);
    const std::string before = tree_digest(fs.backing());
    const int rc = as_agent(fn);
    if (allowed) {
      EXPECT_EQ(rc, 0) << shape.name << ": " << what << " should be allowed: " << strerror(rc);
    } else {
      EXPECT_EQ(rc, EACCES) << shape.name << ": " << what << " should be refused";
      EXPECT_EQ(tree_digest(fs.backing()), before) << shape.name << ": " << what;
    }
  };
  auto each = [&](const auto& ops, const std::vector<std::string>& paths, bool allowed) {
    for (const auto& [name, op] : ops) {
      for (const auto& p : paths) {
        run(
            std::string(name) + " " + p, [&, op = op] { return op(m + p); }, allowed);
      }
    }
  };
  each(kFileOps, shape.files_in, true);
  each(kFileOps, shape.files_out, false);
  each(kNewOps, shape.new_in, true);
  each(kNewOps, shape.new_out, false);
  each(kDirOps, shape.dirs_in, true);
  each(kDirOps, shape.dirs_out, false);
  for (const auto& [name, op] : kNewOps) {
    for (const auto& p : shape.new_temp) {
      run(
          std::string(name) + " " + p, [&, op = op] { return op(m + p); },
          std::string_view(name) == "create");
    }
  }
  // Rename and link need both names (and link's source for what it opens).
  for (const auto& [name, op] : kPairOps) {
    for (const auto& a : shape.files_in) {
      for (const auto& b : shape.new_in) {
        run(
            std::string(name) + " " + a + " " + b, [&, op = op] { return op(m + a, m + b); }, true);
      }
      for (const auto& b : shape.new_out) {
        run(
            std::string(name) + " " + a + " " + b, [&, op = op] { return op(m + a, m + b); },
            false);
      }
    }
    for (const auto& a : shape.files_out) {
      for (const auto& b : shape.new_in) {
        if (a.starts_with(".longrun")) continue;  // refused anyway; not a glob question
        run(
            std::string(name) + " " + a + " " + b, [&, op = op] { return op(m + a, m + b); },
            false);
      }
    }
  }
}

std::vector<const Shape*> all_shapes() {
  std::vector<const Shape*> out;
  for (const auto& s : kShapes) out.push_back(&s);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Table, GlobShape, ::testing::ValuesIn(all_shapes()),
                         [](const auto& info) { return std::string(info.param->name); });

// ---------------------------------------------------------------------------
// Composed effects.
// ---------------------------------------------------------------------------

class ScopeEffect : public ::testing::Test {
 protected:
  void SetUp() override { reseed(fs_); }
  int attempt(const std::function<int()>& fn) { return as_agent(fn); }
  std::string m(const std::string& p) const { return fs_.mnt() + "/" + p; }
  MountedFs fs_{uncached()};
};

// `src/*` covers src/sub but not src/sub/c.c: moving src/sub would move
// src/sub/c.c to src/moved/c.c, outside the scope at both ends.
TEST_F(ScopeEffect, DirectoryRenameNeedsTheWholeSubtreeAtBothEnds) {
  fs_.publish(leased(1, {{{"src/*"}}}));
  const std::string before = tree_digest(fs_.backing());
  EXPECT_EQ(attempt([&] { return err_of(::rename(m("src/sub").c_str(), m("src/moved").c_str())); }),
            EACCES);
  EXPECT_EQ(tree_digest(fs_.backing()), before);
  // `src/**` covers the subtree at both ends; a target outside it does not.
  fs_.publish(leased(2, {{{"src/**"}}}));
  EXPECT_EQ(attempt([&] { return err_of(::rename(m("src/sub").c_str(), m("moved").c_str())); }),
            EACCES);
  EXPECT_EQ(tree_digest(fs_.backing()), before);
  EXPECT_EQ(attempt([&] { return err_of(::rename(m("src/sub").c_str(), m("src/moved").c_str())); }),
            0);
  EXPECT_TRUE(stdfs::exists(fs_.backing() + "/src/moved/deep/d.c"));
  // A directory scope with a trailing slash: the subtree beneath it is covered.
  fs_.publish(leased(3, {{{"src/moved/", "src/again/"}}}));
  EXPECT_EQ(
      attempt([&] { return err_of(::rename(m("src/moved").c_str(), m("src/again").c_str())); }), 0);
}

// Same, with the subtree moving in through a target that is in scope and a
// source whose contents are not: `docs/**` does not cover what `src/sub` holds.
TEST_F(ScopeEffect, DirectoryRenameIntoScopeNeedsTheSourceSubtree) {
  fs_.publish(leased(1, {{{"src/sub", "docs/**"}}}));
  const std::string before = tree_digest(fs_.backing());
  EXPECT_EQ(attempt([&] { return err_of(::rename(m("src/sub").c_str(), m("docs/sub").c_str())); }),
            EACCES);
  EXPECT_EQ(tree_digest(fs_.backing()), before);
}

// Renaming over an existing file deletes it: the op class that deletes is needed.
TEST_F(ScopeEffect, RenameOverAnExistingTargetNeedsUnlink) {
  fs_.publish(leased(1, {{{"src/**"}, gate::kClassRename | gate::kClassCreate}}));
  const std::string before = tree_digest(fs_.backing());
  EXPECT_EQ(attempt([&] { return err_of(::rename(m("src/a.c").c_str(), m("src/b.h").c_str())); }),
            EACCES);
  // Over an empty directory: rmdir, the same class.
  ASSERT_TRUE(in_backing(fs_, "mkdir src/e4 && chown 65534:65534 src/e4").ok());
  const std::string with_e4 = tree_digest(fs_.backing());
  EXPECT_EQ(attempt([&] { return err_of(::rename(m("src/e").c_str(), m("src/e4").c_str())); }),
            EACCES);
  EXPECT_EQ(tree_digest(fs_.backing()), with_e4);
  // To a free name it is a plain rename.
  EXPECT_EQ(attempt([&] { return err_of(::rename(m("src/a.c").c_str(), m("src/n.c").c_str())); }),
            0);
  // With the deleting class too, replacing works.
  fs_.publish(leased(2, {{{"src/**"}, gate::kClassRename | gate::kClassUnlink}}));
  EXPECT_EQ(attempt([&] { return err_of(::rename(m("src/n.c").c_str(), m("src/b.h").c_str())); }),
            0);
  EXPECT_EQ(read_file(fs_.backing() + "/src/b.h"), "data\n");
  (void)before;
}

// RENAME_EXCHANGE moves each name onto the other: both subtrees are judged.
TEST_F(ScopeEffect, RenameExchangeIsCheckedBothWays) {
  fs_.publish(leased(1, {{{"src/*"}}}));
  const std::string before = tree_digest(fs_.backing());
  // src/e (empty) <-> src/sub (holds c.c, deep/): src/sub/c.c would become
  // src/e/c.c, outside `src/*`.
  EXPECT_EQ(attempt([&] {
              return err_of(::renameat2(AT_FDCWD, m("src/e").c_str(), AT_FDCWD,
                                        m("src/sub").c_str(), RENAME_EXCHANGE));
            }),
            EACCES);
  EXPECT_EQ(attempt([&] {
              return err_of(::renameat2(AT_FDCWD, m("src/sub").c_str(), AT_FDCWD,
                                        m("src/e").c_str(), RENAME_EXCHANGE));
            }),
            EACCES);
  EXPECT_EQ(tree_digest(fs_.backing()), before);
  // Two files in scope exchange fine.
  EXPECT_EQ(attempt([&] {
              return err_of(::renameat2(AT_FDCWD, m("src/a.c").c_str(), AT_FDCWD,
                                        m("src/b.h").c_str(), RENAME_EXCHANGE));
            }),
            0);
}

// A hard link is a new name for existing content: it must not let a grant that
// writes src/** write a file under docs/ that was only open for creation.
TEST_F(ScopeEffect, LinkIsANewNameForExistingContent) {
  fs_.publish(leased(1, {{{"src/**"}, gate::kClassWrite | gate::kClassCreate},
                         {{"docs/**"}, gate::kClassCreate}}));
  const std::string before = tree_digest(fs_.backing());
  EXPECT_EQ(attempt([&] { return err_of(::link(m("docs/x.md").c_str(), m("src/x").c_str())); }),
            EACCES);
  EXPECT_EQ(tree_digest(fs_.backing()), before);
  // Within what the grant opens, linking works.
  EXPECT_EQ(attempt([&] { return err_of(::link(m("src/a.c").c_str(), m("src/a2.c").c_str())); }),
            0);
}

// ---------------------------------------------------------------------------
// Paths the gate cannot express in full.
// ---------------------------------------------------------------------------

// Builds a chain of directories under the backing root whose path is longer than
// PATH_MAX, and returns how many levels it has (each "d" + 200 chars).
int deep_chain(const MountedFs& fs) {
  const std::string part(200, 'd');
  int levels = 0;
  int fd = ::open(fs.backing().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  for (size_t len = 0; len < 5000; len += part.size() + 1, ++levels) {
    ::mkdirat(fd, part.c_str(), 0777);
    (void)!::fchownat(fd, part.c_str(), 65534, 65534, 0);
    int next = ::openat(fd, part.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ::close(fd);
    fd = next;
  }
  ::close(fd);
  return levels;
}

// Walks down `levels` components from `top` with relative chdirs (no long path
// ever given to a syscall), then tries `fn` there.
int at_depth(const std::string& top, int levels, const std::function<int()>& fn) {
  return as_agent([&] {
    if (::chdir(top.c_str()) != 0) return 250;
    const std::string part(200, 'd');
    for (int i = 0; i < levels; ++i) {
      if (::chdir(part.c_str()) != 0) return 251;
    }
    return fn();
  });
}

TEST(ScopeUnexpressible, PathsLongerThanPathMaxMatchNoWildcard) {
  MountedFs fs(uncached());
  ASSERT_TRUE(in_backing(fs, "chown 65534:65534 . && echo x > f && chown 65534 f").ok());
  const int levels = deep_chain(fs);
  fs.publish(leased(1, {{{"**"}}, {{"*"}}, {{"d*/**"}}}));
  const std::string before = tree_digest(fs.backing());
  auto create = [] {
    int fd = ::open("new", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    ::close(fd);
    return 0;
  };
  EXPECT_EQ(at_depth(fs.mnt(), levels, create), EACCES);
  EXPECT_EQ(at_depth(fs.mnt(), levels, [] { return err_of(::mkdir("nd", 0755)); }), EACCES);
  EXPECT_EQ(at_depth(fs.mnt(), levels, [] { return err_of(::symlink("t", "sl")); }), EACCES);
  EXPECT_EQ(tree_digest(fs.backing()), before);
  // A grant with no path scope covers them.
  fs.publish(leased(2, {{}}));
  EXPECT_EQ(at_depth(fs.mnt(), levels, create), 0);
}

TEST(ScopeUnexpressible, DirectoryMovedOutOfTheRootMatchesNoWildcard) {
  MountedFs fs(uncached());
  ASSERT_TRUE(in_backing(fs, "mkdir -m 777 away && chown 65534:65534 away").ok());
  fs.publish(leased(1, {{{"**"}}}));
  const std::string away = fs.mnt() + "/away";
  int up[2], down[2];
  ASSERT_EQ(::pipe(up), 0);
  ASSERT_EQ(::pipe(down), 0);
  // The agent holds the directory open through the mount...
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
        ::setresuid(kAgent, kAgent, kAgent) != 0) {
      ::_exit(254);
    }
    int dir = ::open(away.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    (void)!::write(up[1], dir < 0 ? "x" : "o", 1);
    char c = 0;
    if (dir < 0 || ::read(down[0], &c, 1) != 1) ::_exit(250);
    int fd = ::openat(dir, "new", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) ::_exit(errno & 0xff);
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(up[0], &c, 1), 1);
  ASSERT_EQ(c, 'o');
  // ... while the directory leaves the root underneath.
  const std::string outside = fs.base() + "/outside";
  ASSERT_EQ(::rename((fs.backing() + "/away").c_str(), outside.c_str()), 0);
  (void)!::write(down[1], "g", 1);
  int status = 0;
  ::waitpid(pid, &status, 0);
  for (int fd : {up[0], up[1], down[0], down[1]}) ::close(fd);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), EACCES) << "a create under `**` outside the root";
  EXPECT_FALSE(stdfs::exists(outside + "/new"));
}

}  // namespace
}  // namespace leasefs::test::fileplane

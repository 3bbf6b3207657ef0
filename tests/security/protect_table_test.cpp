// Which grants open a protected path, op by op, through a real mount: each
// mutating op on a protected and an unprotected path, under grants of every
// shape. A protected path opens only to a grant that names it explicitly
// (gate/protected_paths.hpp, DESIGN.md "Protected paths"); an unprotected one
// follows the glob as always.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

#include "gate/protected_paths.hpp"
#include "tests/security/fileplane_ops.hpp"
#include "tests/security/fileplane_support.hpp"

namespace leasefs::test::fileplane {
namespace {

namespace stdfs = std::filesystem;

void reseed(const MountedFs& fs) {
  reseed_tree(fs, {".git", ".git/hooks", ".git/hooks/e", ".git/e", "src"},
              {".git/config", ".git/hooks/pre-commit", ".git/HEAD", "src/a.c"});
}

// Targets: protected and not, existing files, new names, empty directories.
struct Target {
  const char* path;
  enum Kind { kFile, kNew, kDir } kind;
};
const Target kTargets[] = {
    {".git/config", Target::kFile},   {".git/hooks/pre-commit", Target::kFile},
    {".git/HEAD", Target::kFile},     {"src/a.c", Target::kFile},
    {".git/hooks/new", Target::kNew}, {".git/config.new", Target::kNew},
    {"src/new.c", Target::kNew},      {".git/hooks/e", Target::kDir},
    {".git/e", Target::kDir},
};

struct GrantShape {
  const char* name;
  std::vector<std::string> patterns;  // none: an unscoped grant
  std::vector<std::string> allowed;   // the targets this grant opens; the rest are refused
  // New names beside an exact path: only `create` is allowed there, making a
  // temporary sibling (gate/temp_sibling.hpp).
  std::vector<std::string> temp = {};
};

const GrantShape kGrantShapes[] = {
    {"Unscoped", {}, {".git/HEAD", "src/a.c", ".git/config.new", "src/new.c", ".git/e"}},
    {"DoubleStar", {"**"}, {".git/HEAD", "src/a.c", ".git/config.new", "src/new.c", ".git/e"}},
    {"GitDir", {".git/**"}, {".git/HEAD", ".git/config.new", ".git/e"}},
    {"GitStar", {".git/*"}, {".git/HEAD", ".git/config.new", ".git/e"}},
    {"TrailingSlash", {".git/"}, {".git/HEAD", ".git/config.new", ".git/e"}},
    {"HooksStar", {".git/hooks/*"}, {".git/hooks/pre-commit", ".git/hooks/new", ".git/hooks/e"}},
    {"HooksDoubleStar",
     {".git/hooks/**"},
     {".git/hooks/pre-commit", ".git/hooks/new", ".git/hooks/e"}},
    {"ExactConfig", {".git/config"}, {".git/config"}, {".git/config.new"}},
    {"ExactHook", {".git/hooks/pre-commit"}, {".git/hooks/pre-commit"}},
    {"WildcardConfig", {".git/conf?g", ".git/config*"}, {".git/config.new"}},
};

// The file operations, and renaming the file away (which needs the new name too).
const PathOps kProtectFileOps = [] {
  PathOps ops = kFileOps;
  ops.emplace_back("rename_away", [](const std::string& p) {
    return err_of(::rename(p.c_str(), (p + ".moved").c_str()));
  });
  return ops;
}();

class ProtectTable : public ::testing::TestWithParam<const GrantShape*> {};

TEST_P(ProtectTable, ProtectedPathsOpenOnlyToGrantsThatNameThem) {
  const GrantShape& shape = *GetParam();
  MountedFsOptions o;
  o.fs.timeout = 0;
  MountedFs fs(o);
  fs.gate().set_protected_globs(gate::default_protected_globs());
  fs.publish(leased(1, {{shape.patterns}}));
  const std::string m = fs.mnt() + "/";
  int rows = 0;
  for (const Target& t : kTargets) {
    auto in = [&](const std::vector<std::string>& v) {
      return std::find(v.begin(), v.end(), t.path) != v.end();
    };
    const bool listed = in(shape.allowed);
    const auto& ops = t.kind == Target::kFile  ? kProtectFileOps
                      : t.kind == Target::kNew ? kNewOps
                                               : kDirOps;
    for (const auto& [name, op] : ops) {
      const bool allowed = listed || (in(shape.temp) && std::string_view(name) == "create");
      // Renaming away also needs the new name; these shapes cover `X.moved`
      // exactly when they cover X, except the exact ones, which name no `.moved`.
      if (std::string_view(name) == "rename_away" && allowed && !shape.patterns.empty() &&
          !gate::has_wildcard(shape.patterns.front())) {
        continue;
      }
      reseed(fs);
      const std::string before = tree_digest(fs.backing());
      const int rc = as_agent([&, op = op] { return op(m + t.path); });
      ++rows;
      if (allowed) {
        EXPECT_EQ(rc, 0) << shape.name << ": " << name << " " << t.path << ": " << strerror(rc);
      } else {
        EXPECT_EQ(rc, EACCES) << shape.name << ": " << name << " " << t.path;
        EXPECT_EQ(tree_digest(fs.backing()), before) << shape.name << ": " << name << " " << t.path;
      }
    }
  }
  EXPECT_GT(rows, 30);
}

std::vector<const GrantShape*> all_grant_shapes() {
  std::vector<const GrantShape*> out;
  for (const auto& s : kGrantShapes) out.push_back(&s);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Table, ProtectTable, ::testing::ValuesIn(all_grant_shapes()),
                         [](const auto& info) { return std::string(info.param->name); });

// A directory holding a protected path cannot be moved or replaced, whichever
// name the grant gives it, even when its subtree is too big to list.
TEST(ProtectTable, RenamingADirectoryThatHoldsAProtectedPathIsRefused) {
  MountedFsOptions o;
  o.fs.timeout = 0;
  MountedFs fs(o);
  fs.gate().set_protected_globs(gate::default_protected_globs());
  fs.publish(leased(1, {{{"**"}}}));
  reseed(fs);
  const std::string m = fs.mnt() + "/";
  const std::string before = tree_digest(fs.backing());
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {".git", "git-away"}, {".git/hooks", ".git/hooks.off"}, {".git/hooks", "src/h"}}) {
    EXPECT_EQ(as_agent([&] { return err_of(::rename((m + from).c_str(), (m + to).c_str())); }),
              EACCES)
        << from << " -> " << to;
  }
  EXPECT_EQ(tree_digest(fs.backing()), before);
  // Into a protected place, and exchanged with one.
  ASSERT_TRUE(in_backing(fs,
                         "mkdir -p g/hooks && echo x > g/hooks/pre-commit && "
                         "echo x > g/config && chown -R 65534:65534 g")
                  .ok());
  const std::string seeded = tree_digest(fs.backing());
  EXPECT_EQ(as_agent([&] {
              return err_of(::rename((m + "g/hooks").c_str(), (m + ".git/hooks/sub").c_str()));
            }),
            EACCES);
  EXPECT_EQ(as_agent([&] {
              return err_of(::renameat2(AT_FDCWD, (m + "g").c_str(), AT_FDCWD, (m + ".git").c_str(),
                                        RENAME_EXCHANGE));
            }),
            EACCES);
  EXPECT_EQ(tree_digest(fs.backing()), seeded);
}

}  // namespace
}  // namespace leasefs::test::fileplane

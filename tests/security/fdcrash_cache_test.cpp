// The inode fd cache at its smallest: every inode's descriptor is evicted and
// reopened by file handle between operations, and the tree still behaves like
// the directory underneath.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "tests/support/mounted_fs.hpp"

namespace leasefs::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

MountedFsOptions tiny_cache() {
  MountedFsOptions o;
  o.fs.fd_cache_capacity = 2;
  return o;
}

TEST(FdCacheTiny, ToolsWorkWhenEveryInodeIsReopenedByHandle) {
  MountedFs fs(tiny_cache());
  fs.grant();
  auto r = fs.sh(
      "set -e; mkdir -p a/b/c; for i in 1 2 3 4 5 6 7 8; do echo $i > a/b/c/f$i; done; "
      "cat a/b/c/f*; mv a/b/c/f1 a/g; ln -s b/c/f2 a/link; cat a/link; ln a/g a/hard; "
      "chmod 600 a/hard; stat -c %a a/g; sed -i s/1/one/ a/g; cat a/g; touch -d @0 a/b/c/f3; "
      "stat -c %Y a/b/c/f3; setfattr -n user.k -v v a/b/c/f4 2>/dev/null || true; "
      "rm a/b/c/f5; ls a/b/c | wc -l; git init -q r && cd r && echo x > x && git add -A && "
      "git -c user.name=t -c user.email=t@t commit -qm m && git status --porcelain | wc -l");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("600\none\n0\n6\n0\n"), std::string::npos) << r.output;
  EXPECT_EQ(slurp(fs.backing() + "/a/g"), "one\n");
  EXPECT_EQ(tree_digest(fs.backing() + "/a"), tree_digest(fs.mnt() + "/a"));
}

}  // namespace
}  // namespace leasefs::test

// Permissions are exactly the backing file system's, POSIX ACLs included: the
// same ACLs (set with setfacl), probed by the same script run as a second uid,
// give the same answers on a plain directory and through the mount (with an
// unscoped lease, so the gate refuses nothing): named-user and named-group deny
// entries, allow entries beyond the mode bits, execute, traversal, and default
// ACLs with the umask they override.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/security/fileplane_support.hpp"

namespace leasefs::test::fileplane {
namespace {

constexpr const char* kSetup =
    "umask 022; mkdir deny allow exec trav def plain; "
    "echo s > deny/f; chmod 666 deny/f; setfacl -m u:65534:--- deny/f; "
    "echo s > gdeny; chmod 666 gdeny; setfacl -m g:65534:--- gdeny; "
    "echo s > allow/f; chmod 600 allow/f; setfacl -m u:65534:rw allow/f; "
    "printf '#!/bin/sh\\necho ran\\n' > exec/s; chmod 700 exec/s; setfacl -m u:65534:rx exec/s; "
    "echo s > trav/f; chmod 644 trav/f; chmod 700 trav; setfacl -m u:65534:x trav; "
    "chmod 777 def plain; setfacl -d -m u:65534:rwx,o::--- def";

constexpr const char* kProbe =
    "r() { if \"$@\" >/dev/null 2>&1; then echo ok; else echo no; fi; }; "
    "echo deny-read $(r cat deny/f); "
    "echo deny-write $(r sh -c 'echo x >> deny/f'); "
    "echo gdeny-read $(r cat gdeny); "
    "echo allow-read $(r cat allow/f); "
    "echo allow-write $(r sh -c 'echo x >> allow/f'); "
    "echo exec $(r ./exec/s); "
    "echo trav $(r cat trav/f); "
    "echo trav-list $(r ls trav); "
    "umask 077; touch def/new plain/new; mkdir def/sub; "
    "echo def-mode $(stat -c %a def/new) plain-mode $(stat -c %a plain/new); "
    "echo def-acl $(getfacl -cn def/new 2>/dev/null | grep -c 65534); "
    "echo def-sub $(getfacl -cn def/sub 2>/dev/null | grep -c default:user:65534)";

TEST(PosixAcl, SameAnswersAsTheBackingFileSystem) {
  // Native: a plain directory beside the mount's.
  const std::string native = make_temp_dir("leasefs-acl-");
  ::chmod(native.c_str(), 0755);
  RunOptions o;
  o.cwd = native;
  auto setup = run_sh(std::string("set -e; ") + kSetup, o);
  ASSERT_TRUE(setup.ok()) << setup.output;
  o.uid = kAgent;
  const RunResult expected = run_sh(kProbe, o);
  remove_tree(native);
  ASSERT_TRUE(expected.ok()) << expected.output;
  // The probe means something on this file system.
  EXPECT_NE(expected.output.find("deny-read no"), std::string::npos) << expected.output;
  EXPECT_NE(expected.output.find("allow-write ok"), std::string::npos) << expected.output;
  EXPECT_NE(expected.output.find("trav ok"), std::string::npos) << expected.output;

  MountedFs fs;
  ASSERT_EQ(::chmod(fs.backing().c_str(), 0755), 0);
  auto r = in_backing(fs, kSetup);
  ASSERT_TRUE(r.ok()) << r.output;
  fs.grant();
  const RunResult through = fs.sh(kProbe, kAgent);
  ASSERT_TRUE(through.ok()) << through.output;
  EXPECT_EQ(through.output, expected.output);
}

}  // namespace
}  // namespace leasefs::test::fileplane

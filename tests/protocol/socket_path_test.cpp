#include "protocol/socket_path.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

namespace leasefs::gate {
namespace {

TEST(SocketPath, EscapesLikeSystemdEscapePath) {
  EXPECT_EQ(protocol::escape_instance("/work/main"), "work-main");
  EXPECT_EQ(protocol::escape_instance("/tmp/a b/c-d/"), "tmp-a\\x20b-c\\x2dd");
  EXPECT_EQ(protocol::escape_instance("/.hidden/x"), "\\x2ehidden-x");
  EXPECT_EQ(protocol::escape_instance("/"), "-");
  EXPECT_EQ(protocol::escape_instance("//a//b/"), "a-b");
  EXPECT_EQ(protocol::escape_instance("/tmp/\xc3\xbc"), "tmp-\\xc3\\xbc");
  EXPECT_EQ(protocol::escape_instance("/a/b.c_d:e"), "a-b.c_d:e");
}

TEST(SocketPath, DefaultForRootIsRunLeasefs) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  EXPECT_EQ(protocol::default_socket_path("/srv/proj"), "/run/leasefs/srv-proj.sock");
}

}  // namespace
}  // namespace leasefs::gate

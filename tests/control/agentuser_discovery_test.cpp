// The pieces of daemon discovery and of command-line help that need no daemon.
#include <gtest/gtest.h>
#include <unistd.h>

#include "protocol/arg_text.hpp"
#include "protocol/daemon_discovery.hpp"

namespace leasefs::gate {
namespace {

TEST(SocketPointer, RoundTripsPathAndPid) {
  auto p = protocol::parse_socket_pointer(
      protocol::format_socket_pointer("/run/leasefs/srv-p.sock", 4242));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->socket, "/run/leasefs/srv-p.sock");
  EXPECT_EQ(p->pid, 4242);
}

TEST(SocketPointer, AnOlderPointerHasNoPidAndAnEmptyOneIsNothing) {
  auto p = protocol::parse_socket_pointer("/tmp/ctl.sock\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->socket, "/tmp/ctl.sock");
  EXPECT_EQ(p->pid, 0);
  EXPECT_FALSE(protocol::parse_socket_pointer(""));
  EXPECT_FALSE(protocol::parse_socket_pointer("\npid 3\n"));
}

TEST(DiscoverDaemon, OutsideAnyMountSaysSoAndTrustsNothing) {
  protocol::Discovery d = protocol::discover_daemon("/", ::getuid());
  EXPECT_FALSE(d.daemon);
  EXPECT_FALSE(d.untrusted);
  EXPECT_NE(d.problem.find("is not inside a leasefs mount"), std::string::npos) << d.problem;
  d = protocol::discover_daemon("/nonexistent/dir", ::getuid());
  EXPECT_FALSE(d.daemon);
  EXPECT_NE(d.problem.find("No such file"), std::string::npos) << d.problem;
}

TEST(ClosestWord, NamesASlipButNotAStranger) {
  const std::vector<std::string> cmds = {"status", "start", "turn", "end-turn", "grant", "mount"};
  EXPECT_EQ(protocol::closest_word("stauts", cmds), "status");
  EXPECT_EQ(protocol::closest_word("mout", cmds), "mount");
  EXPECT_EQ(protocol::closest_word("grnat", cmds), "grant");
  EXPECT_EQ(protocol::closest_word("frobnicate", cmds), "");
  EXPECT_EQ(protocol::closest_word("x", cmds), "");
}

}  // namespace
}  // namespace leasefs::gate

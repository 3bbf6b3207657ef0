// Peer credentials: supplementary groups come from the socket (SO_PEERGROUPS),
// as they were at connect time, not from /proc.
#include "control/peer.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/unique_fd.hpp"

namespace leasefs::control {
namespace {

std::vector<gid_t> own_groups() {
  int n = ::getgroups(0, nullptr);
  std::vector<gid_t> g(static_cast<size_t>(std::max(n, 0)));
  if (n > 0) g.resize(static_cast<size_t>(::getgroups(n, g.data())));
  std::sort(g.begin(), g.end());
  return g;
}

TEST(ControlPeer, GroupsComeFromTheSocket) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  base::UniqueFd a(sv[0]), b(sv[1]);
  auto groups = peer_groups(a.get());
  ASSERT_TRUE(groups) << "SO_PEERGROUPS: " << std::strerror(errno);
  std::sort(groups->begin(), groups->end());
  EXPECT_EQ(*groups, own_groups());
}

TEST(ControlPeer, ActorFromPeerCredentials) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  base::UniqueFd a(sv[0]), b(sv[1]);
  ApproverPolicy nobody;
  nobody.owner_uid = ::geteuid() + 1;
  auto actor = peer_actor(a.get(), nobody);
  ASSERT_TRUE(actor);
  EXPECT_EQ(actor->pid, ::getpid());
  EXPECT_EQ(actor->uid, ::geteuid());
  EXPECT_EQ(actor->gid, ::getegid());
  EXPECT_EQ(actor->approver, ::geteuid() == 0);

  ApproverPolicy owner;
  owner.owner_uid = ::geteuid();
  EXPECT_TRUE(peer_actor(a.get(), owner)->approver);

  // A supplementary group the peer really has makes it an approver.
  auto groups = own_groups();
  groups.erase(std::remove(groups.begin(), groups.end(), ::getegid()), groups.end());
  if (::geteuid() != 0 && !groups.empty()) {
    ApproverPolicy by_group = nobody;
    by_group.gids = {groups.front()};
    EXPECT_TRUE(peer_actor(a.get(), by_group)->approver);
  }
}

TEST(ControlPeer, ApproverPolicy) {
  ApproverPolicy p;
  p.owner_uid = 500;
  p.uids = {600};
  p.gids = {42};
  EXPECT_TRUE(p.is_approver(0, 0, {}));
  EXPECT_TRUE(p.is_approver(500, 500, {}));
  EXPECT_TRUE(p.is_approver(600, 600, {}));
  EXPECT_TRUE(p.is_approver(700, 42, {}));
  EXPECT_TRUE(p.is_approver(700, 700, {1, 42}));
  EXPECT_FALSE(p.is_approver(700, 700, {1, 2}));
  EXPECT_FALSE(p.is_approver(700, 700, {}));
  ApproverPolicy no_groups;
  no_groups.owner_uid = 500;
  EXPECT_FALSE(no_groups.is_approver(700, 42, {42}));
}

}  // namespace
}  // namespace leasefs::control

// A daemon killed with SIGKILL leaves its socket file, given to the agent's group.
// Once that group is gone its id can be a new group's: the next daemon to open a
// socket in the directory removes such files, and only those.
#include "control/orphan_sockets.hpp"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "base/unique_fd.hpp"
#include "control/listener.hpp"

namespace leasefs::control {
namespace {

namespace stdfs = std::filesystem;

gid_t unused_gid() {
  for (gid_t gid = 61000; gid < 65000; ++gid) {
    if (::getgrgid(gid) == nullptr) return gid;
  }
  return static_cast<gid_t>(-1);
}

// A socket file at `path` of group `gid`; listening when `live` (kept in `*keep`).
void make_socket(const std::string& path, gid_t gid, bool live, base::UniqueFd* keep) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  base::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(fd);
  ASSERT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::chown(path.c_str(), static_cast<uid_t>(-1), gid), 0);
  if (live) {
    ASSERT_EQ(::listen(fd.get(), 4), 0);
    *keep = std::move(fd);
  }
}

class OrphanSockets : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/leasefs-orphans-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    gone_ = unused_gid();
    ASSERT_NE(gone_, static_cast<gid_t>(-1));
  }
  void TearDown() override { stdfs::remove_all(dir_); }
  std::string dir_;
  gid_t gone_ = 0;
};

TEST_F(OrphanSockets, ADeadSocketOfAVanishedGroupIsRemovedWhenTheNextDaemonOpens) {
  base::UniqueFd live;
  make_socket(dir_ + "/orphan.sock", gone_, false, nullptr);
  make_socket(dir_ + "/live.sock", gone_, true, &live);
  make_socket(dir_ + "/dead-of-root.sock", 0, false, nullptr);
  Listener listener;
  listener.open({dir_ + "/new.sock"});
  EXPECT_FALSE(stdfs::exists(stdfs::symlink_status(dir_ + "/orphan.sock")));
  // A daemon still answers on it: never taken, whatever its group.
  EXPECT_TRUE(stdfs::exists(stdfs::symlink_status(dir_ + "/live.sock")));
  // Of a group that exists: replaced only when a daemon wants its path.
  EXPECT_TRUE(stdfs::exists(stdfs::symlink_status(dir_ + "/dead-of-root.sock")));
  EXPECT_TRUE(stdfs::exists(stdfs::symlink_status(dir_ + "/new.sock")));
  listener.close();
}

TEST_F(OrphanSockets, OnlySocketsAreLookedAt) {
  const std::string plain = dir_ + "/notes.txt";
  ASSERT_EQ(std::system(
                ("echo x > " + plain + " && chgrp " + std::to_string(gone_) + " " + plain).c_str()),
            0);
  EXPECT_EQ(remove_orphaned_sockets(dir_), 0);
  EXPECT_TRUE(stdfs::exists(plain));
  EXPECT_EQ(remove_orphaned_sockets(dir_ + "/missing"), 0);
}

}  // namespace
}  // namespace leasefs::control

// The pieces of daemon discovery, of the mount watch and of command-line help that
// need no daemon.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <new>
#include <thread>

#include "base/mountinfo.hpp"
#include "daemon/mount_watch.hpp"
#include "protocol/arg_text.hpp"
#include "protocol/daemon_discovery.hpp"
#include "protocol/daemon_registry.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::gate {
namespace {

protocol::RegistryEntry entry(pid_t pid, int mount_id) {
  return {pid, ::geteuid(), mount_id, "0:99", "/srv/p", "/srv/p", "/run/leasefs/srv-p.sock"};
}

pid_t dead_pid() {
  std::fflush(nullptr);  // a child's exit must not print the parent's buffered output again
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST(DaemonRegistry, OnlyLiveEntriesTheOwnerWroteInADirectoryNobodyElseWritesAreRead) {
  const std::string dir = test::make_temp_dir("leasefs-registry-") + "/daemons";
  const std::string mine = protocol::register_daemon(dir, entry(::getpid(), 41));
  auto read = protocol::read_registry(dir, ::geteuid());
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].mount_id, 41);
  EXPECT_EQ(read[0].socket, "/run/leasefs/srv-p.sock");

  // A dead daemon's entry is ignored, and swept by the next daemon to register.
  const std::string stale = protocol::register_daemon(dir, entry(dead_pid(), 42));
  EXPECT_EQ(protocol::read_registry(dir, ::geteuid()).size(), 1u);
  protocol::register_daemon(dir, entry(::getpid(), 43));
  struct stat st {};
  EXPECT_NE(::stat(stale.c_str(), &st), 0) << stale;

  // Another owner's file, or one others may write, is not an entry.
  ASSERT_EQ(::chown((dir + "/43.json").c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(mine.c_str(), 0666), 0);
  EXPECT_TRUE(protocol::read_registry(dir, ::geteuid()).empty());
  ASSERT_EQ(::chmod(mine.c_str(), 0644), 0);
  EXPECT_EQ(protocol::read_registry(dir, ::geteuid()).size(), 1u);

  // Nor is anything in a directory others may write.
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  std::string why;
  EXPECT_TRUE(protocol::read_registry(dir, ::geteuid(), &why).empty());
  EXPECT_NE(why.find("writable by others"), std::string::npos) << why;
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);

  // A clean stop removes the daemon's own entry, never another's.
  protocol::unregister_daemon(dir + "/43.json");
  EXPECT_EQ(::stat((dir + "/43.json").c_str(), &st), 0);
  protocol::unregister_daemon(mine);
  EXPECT_NE(::stat(mine.c_str(), &st), 0);
  test::remove_tree(dir.substr(0, dir.rfind('/')));
}

// Plays rounds of a race until one is lost (its number is returned) or the budget
// is spent: 3,000 rounds, or 3 s on a loaded machine, well within ctest's timeout.
template <class Round>
int first_lost_round(Round round_kept) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (int i = 1; i <= 3000 && std::chrono::steady_clock::now() < end; ++i) {
    if (!round_kept()) return i;
  }
  return 0;
}

// Waits until `count` has moved on twice from now: a pass of the other side that
// was under way has then ended.
void two_more(const std::atomic<uint64_t>& count) {
  const uint64_t seen = count;
  while (count < seen + 2) std::this_thread::yield();
}

// Mount ids are reused as soon as a mount is gone, so a new daemon may register
// under the name a dead or leaving daemon's entry still has. Neither the sweep of
// dead entries nor a leaving daemon may then remove the new daemon's entry: each
// race below once left a live daemon that leasectl called untrusted.
TEST(DaemonRegistry, ASweepNeverRemovesTheLiveEntryThatReplacedADeadOne) {
  const std::string dir = test::make_temp_dir("leasefs-registry-") + "/daemons";
  const pid_t dead = dead_pid();
  std::atomic<bool> done{false};
  std::atomic<uint64_t> sweeps{0};
  std::thread sweeper([&] {
    while (!done) {
      protocol::register_daemon(dir, entry(::getpid(), 1));  // sweeps on every call
      ++sweeps;
    }
  });
  const int lost = first_lost_round([&] {
    protocol::register_daemon(dir, entry(dead, 2));
    protocol::register_daemon(dir, entry(::getpid(), 2));
    two_more(sweeps);
    struct stat st {};
    return ::stat((dir + "/2.json").c_str(), &st) == 0;
  });
  done = true;
  sweeper.join();
  EXPECT_EQ(lost, 0) << "the live entry was swept in round " << lost;
  test::remove_tree(dir.substr(0, dir.rfind('/')));
}

TEST(DaemonRegistry, ALeavingDaemonNeverRemovesTheEntryOfTheOneThatTookItsMountId) {
  const std::string dir = test::make_temp_dir("leasefs-registry-") + "/daemons";
  const std::string path = dir + "/3.json";
  // Shared with the leaving daemon: how often it has removed its entry, and a stop.
  void* map = ::mmap(nullptr, 2 * sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto* removals = new (map) std::atomic<uint64_t>(0);
  auto* stop = new (removals + 1) std::atomic<uint64_t>(0);
  std::fflush(nullptr);  // a child's exit must not print the parent's buffered output again
  const pid_t leaving = ::fork();
  if (leaving == 0) {
    while (*stop == 0) {
      protocol::unregister_daemon(path);
      ++*removals;
    }
    ::_exit(0);
  }
  ASSERT_GT(leaving, 0);
  const int lost = first_lost_round([&] {
    protocol::register_daemon(dir, entry(leaving, 3));     // the leaving daemon's entry
    protocol::register_daemon(dir, entry(::getpid(), 3));  // a new daemon, same mount id
    two_more(*removals);
    auto read = protocol::read_registry(dir, ::geteuid());
    return read.size() == 1 && read[0].pid == ::getpid();
  });
  *stop = 1;
  ::waitpid(leaving, nullptr, 0);
  ::munmap(map, 2 * sizeof(std::atomic<uint64_t>));
  EXPECT_EQ(lost, 0) << "the new daemon's entry was removed in round " << lost;
  test::remove_tree(dir.substr(0, dir.rfind('/')));
}

TEST(ForeignMounts, FuseMountsOnUnderOrOverTheTreeByUsersNoApproverAre) {
  auto mount = [](int id, std::string mp, std::string fstype, std::string super) {
    base::MountEntry m;
    m.mount_id = id;
    m.mount_point = std::move(mp);
    m.fstype = std::move(fstype);
    m.source = "src";
    m.super_options = std::move(super);
    return m;
  };
  const std::vector<base::MountEntry> table = {
      mount(1, "/srv/p", "fuse.leasefs", "rw,user_id=0,group_id=0"),  // the daemon's own
      mount(2, "/srv/p", "fuse.agentfs", "rw,user_id=1000,group_id=1000"),
      mount(3, "/srv/p/src/deep", "fuse", "rw,user_id=1000,group_id=1000"),
      mount(4, "/srv/p/tmp", "tmpfs", "rw"),                                // root made it
      mount(5, "/srv/p/x", "fuse.sshfs", "rw,user_id=2000,group_id=2000"),  // an approver's
      mount(6, "/srv/project2", "fuse", "rw,user_id=1000,group_id=1000"),   // not the tree
      mount(7, "/srv/p/odd", "fuse.odd", "rw"),                         // no user_id=: fail closed
      mount(8, "/srv/p/old", "fuse", "rw,user_id=1000,group_id=1000"),  // there before: counts
      mount(9, "/srv", "fuse", "rw,user_id=1000,group_id=1000"),        // over the tree
      mount(10, "/", "ext4", "rw"),
  };
  const auto found = daemon::foreign_mounts(table, {"/srv/p"}, {0, 2000});
  std::vector<int> ids;
  for (const auto& m : found) ids.push_back(m.mount_id);
  EXPECT_EQ(ids, (std::vector<int>{2, 3, 7, 8, 9}));
  EXPECT_EQ(found[0].uid, 1000u);
  EXPECT_EQ(found[0].mount_point, "/srv/p");
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

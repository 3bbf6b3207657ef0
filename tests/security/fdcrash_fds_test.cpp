// Item: bounded file descriptors. An agent (uid 65534) walks 110,000 files, or
// holds 20,000 open through the mount; the daemon's descriptors stay within its
// budget, the control plane keeps answering, and revocation still bites.
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "fuse/fd_budget.hpp"
#include "fuse/inode_fd.hpp"
#include "tests/security/fdcrash_fixture.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

size_t fds_of(pid_t pid) {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// A call that may not be answered: {"ok": false, "error": ...} instead of throwing.
nlohmann::json call(const std::string& sock, const std::string& cmd,
                    nlohmann::json args = nlohmann::json::object()) {
  try {
    ControlClient c(sock);
    return c.call(cmd, std::move(args), 20000);
  } catch (const std::exception& e) {
    return {{"ok", false}, {"error", e.what()}};
  }
}

// `dirs` directories of `per_dir` empty files each, made underneath quickly.
void make_files(const std::string& dir, int dirs, int per_dir, mode_t mode) {
  for (int d = 0; d < dirs; ++d) {
    const std::string sub = dir + "/d" + std::to_string(d);
    ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0) << sub;
    base::UniqueFd dfd(::open(sub.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    for (int f = 0; f < per_dir; ++f) {
      const int fd = ::openat(dfd.get(), ("f" + std::to_string(f)).c_str(),
                              O_CREAT | O_WRONLY | O_CLOEXEC, mode);
      ASSERT_GE(fd, 0);
      ::fchmod(fd, mode);
      ::close(fd);
    }
  }
}

// What the daemon may hold: the inode cache, the reserve, and a little slack for
// its fixed descriptors (socket, SQLite, logs, /dev/fuse).
constexpr size_t kWalkBudget = fuse::FdCache::kDefaultCapacity + fuse::FdBudget::kReserve;

TEST_F(FdcrashTest, WalkOverManyFilesKeepsTheDaemonUnderItsBudget) {
  constexpr int kDirs = 110, kPerDir = 1000;
  make_files(root, kDirs, kPerDir, 0644);
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const pid_t daemon = read_lock_pid(root + "/.longrun/lock");
  ASSERT_GT(daemon, 0);
  ASSERT_TRUE(call(sock, "start", {{"description", "walk"}}).value("ok", false));

  RunOptions as_agent;
  as_agent.uid = kAgentUid;
  as_agent.timeout_s = 400;
  auto walk = run_sh("find " + root + " -type f ! -path '*/.longrun/*' | wc -l", as_agent);
  EXPECT_EQ(walk.exit_code, 0) << walk.output.substr(0, 2000);
  EXPECT_EQ(
      std::stoul(walk.output.substr(walk.output.find_last_of('\n', walk.output.size() - 2) + 1)),
      static_cast<size_t>(kDirs * kPerDir))
      << walk.output.substr(0, 2000);
  const size_t held = fds_of(daemon);
  std::printf("after the walk the daemon holds %zu descriptors\n", held);
  EXPECT_LT(held, kWalkBudget) << "the daemon holds " << held << " descriptors";

  auto turn = call(sock, "turn");
  EXPECT_TRUE(turn.value("ok", false)) << turn.dump();
  auto status = call(sock, "status");
  ASSERT_TRUE(status.value("ok", false)) << status.dump();
  const auto& plane = status["result"]["file_plane"];
  EXPECT_LE(plane["inode_cache"]["open"].get<size_t>(), fuse::FdCache::kDefaultCapacity)
      << status.dump();
  EXPECT_GE(plane["inodes"].get<size_t>(), static_cast<size_t>(kDirs)) << status.dump();
  EXPECT_LT(plane["fds"]["open"].get<size_t>(), kWalkBudget) << status.dump();
}

struct HoldReport {
  int opened = 0;
  int emfile = 0;
  int other = 0;
};

TEST_F(FdcrashTest, TwentyThousandFilesHeldOpenLeaveTurnAndRevokeWorking) {
  constexpr int kPerAgent = 10000;
  make_files(root, 2, kPerAgent, 0666);
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const pid_t daemon = read_lock_pid(root + "/.longrun/lock");
  ASSERT_TRUE(call(sock, "start", {{"description", "hold"}}).value("ok", false));
  ASSERT_TRUE(call(sock, "grant", {{"reason", "go"}}).value("ok", false));

  // Each agent: (first only) one file opened for writing under the lease, then
  // kPerAgent files read-only, held; reports; on a byte, writes the held
  // writable file and reports errno (0: written).
  int report[2][2], command[2];
  ASSERT_EQ(::pipe(report[0]), 0);
  ASSERT_EQ(::pipe(report[1]), 0);
  ASSERT_EQ(::pipe(command), 0);
  for (int a = 0; a < 2; ++a) {
    const std::string dir = root + "/d" + std::to_string(a);
    const int out = report[a][1], in = command[0];
    ASSERT_GT(spawn_agent([dir, out, in, a] {
                int wfd = -1;
                if (a == 0) wfd = ::open((dir + "/f0").c_str(), O_WRONLY);
                HoldReport rep;
                char name[64];
                for (int f = 0; f < kPerAgent; ++f) {
                  std::snprintf(name, sizeof name, "/f%d", f);
                  const int fd = ::open((dir + name).c_str(), O_RDONLY);
                  if (fd >= 0) {
                    ++rep.opened;
                  } else if (errno == EMFILE || errno == ENFILE) {
                    ++rep.emfile;
                  } else {
                    ++rep.other;
                  }
                }
                (void)!::write(out, &rep, sizeof rep);
                if (a != 0) {
                  for (;;) ::pause();
                }
                char c;
                (void)!::read(in, &c, 1);
                int err = wfd < 0 ? -1 : (::write(wfd, "x", 1) == 1 ? 0 : errno);
                (void)!::write(out, &err, sizeof err);
                for (;;) ::pause();
              }),
              0);
  }
  HoldReport total;
  for (int a = 0; a < 2; ++a) {
    pollfd p{report[a][0], POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 300000), 1) << "agent " << a << " did not report";
    HoldReport rep;
    ASSERT_EQ(::read(report[a][0], &rep, sizeof rep), static_cast<ssize_t>(sizeof rep));
    total.opened += rep.opened;
    total.emfile += rep.emfile;
    total.other += rep.other;
  }
  std::printf("agents: %d files held open, %d refused with EMFILE\n", total.opened, total.emfile);
  // Every open either worked or failed for lack of a descriptor, clearly.
  EXPECT_EQ(total.opened + total.emfile, 2 * kPerAgent);
  EXPECT_EQ(total.other, 0);
  EXPECT_GT(total.opened, 0);

  auto status = call(sock, "status");
  ASSERT_TRUE(status.value("ok", false)) << status.dump();
  EXPECT_LE(status["result"]["file_plane"]["fds"]["open"].get<size_t>(),
            status["result"]["file_plane"]["fds"]["limit"].get<size_t>());
  auto turn = call(sock, "turn");
  EXPECT_TRUE(turn.value("ok", false)) << turn.dump();
  auto revoke = call(sock, "revoke");
  EXPECT_TRUE(revoke.value("ok", false)) << revoke.dump();

  // The lease of the earlier turn does not carry the held writable descriptor.
  ASSERT_EQ(::write(command[1], "w", 1), 1);
  pollfd p{report[0][0], POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 60000), 1);
  int err = 0;
  ASSERT_EQ(::read(report[0][0], &err, sizeof err), static_cast<ssize_t>(sizeof err));
  EXPECT_EQ(err, EACCES);
  RunOptions as_agent;
  as_agent.uid = kAgentUid;
  auto w = run_sh("echo x > " + root + "/d1/new.txt", as_agent);
  EXPECT_NE(w.exit_code, 0) << w.output;
  EXPECT_GT(fds_of(daemon), 0u);
  for (int* fds : {report[0], report[1], command}) {
    ::close(fds[0]);
    ::close(fds[1]);
  }
}

}  // namespace
}  // namespace leasefs::test

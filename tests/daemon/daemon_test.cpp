// The real `leasefs` binary: mount, refuse a second daemon, recover from a
// kill -9, refuse bad arguments clearly, grant through the control socket.
// Every test kills its daemons and clears its mounts on every exit path.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "daemon/mount_table.hpp"
#include "tests/support/control_client.hpp"
#include "tests/support/daemon_run.hpp"
#include "tests/support/daemon_site.hpp"
#include "tests/support/mounted_fs.hpp"

namespace leasefs::test {
namespace {

const std::string kLeasefs = LEASEFS_BIN;

// Temp tree + cleanup (DaemonSite): every mount point used is detached and every
// daemon seen is killed, whatever happened in the test.
class DaemonTest : public ::testing::Test, protected DaemonSite {
 protected:
  DaemonTest()
      : DaemonSite("leasefs-daemon-"),
        root(add_root()),
        mnt(base + "/mnt"),
        sock(base + "/ctl.sock") {
    ::mkdir(mnt.c_str(), 0755);
    mounts.push_back(mnt);
  }
  void TearDown() override { take_down(); }
  RunResult leasefs(const std::vector<std::string>& args) {
    RunResult r = run_binary(kLeasefs, args);
    // A daemon that started is recorded for cleanup right away.
    for (const std::string& mp : {mnt, root}) {
      if (base::leasefs_mount_at(mp)) remember(read_lock_pid(mp + "/.longrun/lock"));
    }
    return r;
  }
  static bool wait_gone(pid_t pid) {
    for (int i = 0; i < 500 && ::kill(pid, 0) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return ::kill(pid, 0) != 0;
  }

  std::string root, mnt, sock;
};

TEST_F(DaemonTest, MountGrantWriteUnmount) {
  auto r = leasefs({"mount", root, mnt, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mounted " + root + " at " + mnt), std::string::npos) << r.output;
  ASSERT_TRUE(base::leasefs_mount_at(mnt));
  const pid_t pid = read_lock_pid(mnt + "/.longrun/lock");
  ASSERT_GT(pid, 0);

  RunOptions in_mnt;
  in_mnt.cwd = mnt;
  auto w = run_sh("echo x > a.txt", in_mnt);
  EXPECT_NE(w.exit_code, 0);
  EXPECT_NE(w.output.find("Permission denied"), std::string::npos) << w.output;

  {
    ControlClient c(sock);
    auto reply = c.call("start", {{"description", "daemon test"}});
    ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
    reply = c.call("grant", {{"reason", "go ahead"}});
    ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  }
  w = run_sh("echo x > a.txt && cat a.txt", in_mnt);
  EXPECT_EQ(w.exit_code, 0) << w.output;
  w = run_sh("echo x > .longrun/evil", in_mnt);
  EXPECT_NE(w.output.find("Permission denied"), std::string::npos) << w.output;
  w = run_sh("cat .longrun/status.md", in_mnt);
  EXPECT_EQ(w.exit_code, 0) << w.output;

  r = leasefs({"unmount", mnt});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(base::leasefs_mount_at(mnt));
  EXPECT_TRUE(wait_gone(pid));
  std::ifstream in(root + "/a.txt");
  std::string content;
  in >> content;
  EXPECT_EQ(content, "x");
}

TEST_F(DaemonTest, SecondMountOfSameRootIsRefusedNamingThePid) {
  auto r = leasefs({"mount", root, mnt, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const pid_t pid = read_lock_pid(mnt + "/.longrun/lock");
  auto again = leasefs({"mount", root, mnt, "--socket", base + "/other.sock"});
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_NE(again.output.find("already served by leasefs (pid " + std::to_string(pid) + ")"),
            std::string::npos)
      << again.output;
  // A different mount point, same root: the root's lock refuses it.
  const std::string mnt2 = base + "/mnt2";
  ::mkdir(mnt2.c_str(), 0755);
  again = leasefs({"mount", root, mnt2, "--socket", base + "/other.sock"});
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_NE(again.output.find("pid " + std::to_string(pid)), std::string::npos) << again.output;
  EXPECT_FALSE(base::leasefs_mount_at(mnt2));
}

TEST_F(DaemonTest, KillDashNineThenMountAgainClearsTheDeadMount) {
  // Over the root itself, the way it is meant to be used.
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const pid_t pid = read_lock_pid(root + "/.longrun/lock");
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGKILL);
  ASSERT_TRUE(wait_gone(pid));
  struct statfs sfs {};
  EXPECT_NE(::statfs(root.c_str(), &sfs), 0);
  EXPECT_EQ(errno, ENOTCONN);
  struct stat st {};

  r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dead"), std::string::npos) << r.output;
  EXPECT_EQ(::stat((root + "/.longrun").c_str(), &st), 0);
  const pid_t pid2 = read_lock_pid(root + "/.longrun/lock");
  EXPECT_NE(pid2, pid);
  r = leasefs({"unmount", root});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(wait_gone(pid2));
}

TEST_F(DaemonTest, MissingRootOrRootIsAFileFailsClearly) {
  auto r = leasefs({"mount", base + "/nope", mnt});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("error: root " + base + "/nope: No such file or directory"),
            std::string::npos)
      << r.output;
  std::ofstream(base + "/file") << "x";
  r = leasefs({"mount", base + "/file", mnt});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("is not a directory"), std::string::npos) << r.output;
  r = leasefs({"mount", root, base + "/file"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("mountpoint " + base + "/file is not a directory"), std::string::npos)
      << r.output;
  EXPECT_FALSE(base::leasefs_mount_at(mnt));
  EXPECT_FALSE(base::leasefs_mount_at(root));
}

// Polls a file through the mount until it contains `needle` (the daemon writes
// status.md shortly after a refusal is reported).
bool eventually_contains(const std::string& file, const std::string& needle) {
  for (int i = 0; i < 100; ++i) {
    std::ifstream in(file);
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (content.find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// The audit's hash of a file written through a lease reads it after its close.
// Natively nothing reads it then, so its access time stays as the writer left
// it (relatime would otherwise move it past the modification time, which is
// how mail readers and `find -anewer` tell a file read since it was changed).
TEST_F(DaemonTest, HashingAWrittenFileLeavesItsAccessTimeAsItWas) {
  auto r = leasefs({"mount", root, mnt, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ControlClient c(sock);
  ASSERT_TRUE(c.call("start", {{"description", "atime"}}).value("ok", false));
  ASSERT_TRUE(c.call("grant", {{"reason", "write one file"}}).value("ok", false));
  ControlClient watch(sock);
  ASSERT_TRUE(watch.call("watch").value("ok", false));
  RunOptions in_mnt;
  in_mnt.cwd = mnt;
  // Written, then given an access time before its modification time, as an
  // extracting tool does, then closed.
  auto w = run_sh(
      "python3 -c \"import os\n"
      "with open('t.txt', 'w') as f:\n"
      "    f.write('text'); f.flush(); os.utime(f.fileno(), ns=(1000000000, 2000000000))\"",
      in_mnt);
  ASSERT_EQ(w.exit_code, 0) << w.output;
  nlohmann::json closed;
  while (closed.is_null()) {
    nlohmann::json e = nlohmann::json::parse(watch.read_line(10000));
    if (e.value("type", "") == "write_closed" && e.value("path", "") == "t.txt") closed = e;
  }
  EXPECT_TRUE(closed.contains("sha256")) << closed.dump();
  struct stat st {};
  ASSERT_EQ(::stat((root + "/t.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_atim.tv_sec, 1);
  EXPECT_EQ(st.st_atim.tv_nsec, 0);
  EXPECT_EQ(st.st_mtim.tv_sec, 2);
}

TEST_F(DaemonTest, StatusMdThroughTheMountFollowsRefusalGrantAndTurn) {
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string status = root + "/.longrun/status.md";  // read through the mount
  // A detached daemon logs to .longrun/daemon.log, readable through the mount.
  EXPECT_TRUE(eventually_contains(root + "/.longrun/daemon.log", "listening on " + sock));
  ControlClient c(sock);
  ASSERT_TRUE(c.call("start", {{"description", "status test"}}).value("ok", false));

  RunOptions in_root;
  in_root.cwd = root;
  auto w = run_sh("echo x > refused.txt", in_root);
  EXPECT_NE(w.exit_code, 0);
  // Text not written by the daemon is quoted where Markdown could read it as
  // markup (service/md_quote.hpp); plain names read plainly.
  EXPECT_TRUE(eventually_contains(status, "- create refused.txt by sh (pid "));
  EXPECT_TRUE(eventually_contains(status, "leasectl request --reason"));

  ASSERT_TRUE(c.call("grant", {{"reason", "the words of the approver"}}).value("ok", false));
  EXPECT_TRUE(eventually_contains(status, ": the words of the approver\n"));

  ASSERT_TRUE(c.call("turn").value("ok", false));
  EXPECT_TRUE(eventually_contains(status, "None: the tree is read-only"));
  EXPECT_TRUE(eventually_contains(status, "Turn: 1"));
}

TEST_F(DaemonTest, I3_DaemonRestartRevokesTheLease) {
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  {
    ControlClient c(sock);
    ASSERT_TRUE(c.call("start", {{"description", "restart test"}}).value("ok", false));
    ASSERT_TRUE(c.call("grant", {{"reason", "go"}}).value("ok", false));
  }
  RunOptions in_root;
  in_root.cwd = root;
  EXPECT_EQ(run_sh("echo before > a.txt", in_root).exit_code, 0);
  ASSERT_EQ(leasefs({"unmount", root}).exit_code, 0);
  ASSERT_EQ(leasefs({"mount", root, "--socket", sock}).exit_code, 0);
  auto w = run_sh("echo after > a.txt", in_root);
  EXPECT_NE(w.exit_code, 0);
  EXPECT_NE(w.output.find("Permission denied"), std::string::npos) << w.output;
  std::ifstream in(root + "/a.txt");
  std::string content;
  in >> content;
  EXPECT_EQ(content, "before");
}

// A corrupt state never leaves the root unmounted and unprotected: the daemon
// comes up read-only for everyone, status says what is wrong and how to repair
// it, and the file is left as it was.
TEST_F(DaemonTest, I7_CorruptStateServesReadOnlyExplainsAndIsLeftAsItWas) {
  ::mkdir((root + "/.longrun").c_str(), 0700);
  std::ofstream(root + "/kept.txt") << "kept";
  const std::string garbage = "{\"task_id\": \"T_1\", \"status\": ";
  std::ofstream(root + "/.longrun/state.json") << garbage;
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(base::leasefs_mount_at(root));

  RunOptions in_root;
  in_root.cwd = root;
  EXPECT_NE(run_sh("echo x > new.txt", in_root).exit_code, 0);
  EXPECT_NE(run_sh("echo x >> kept.txt", in_root).exit_code, 0);
  EXPECT_NE(run_sh("rm kept.txt", in_root).exit_code, 0);
  EXPECT_EQ(run_sh("cat kept.txt", in_root).output, "kept");
  {
    ControlClient c(sock);
    // Not even an approver can make it writable before the state is repaired.
    EXPECT_FALSE(c.call("start", {{"description", "x"}}).value("ok", true));
    EXPECT_FALSE(c.call("grant", {{"reason", "x"}}).value("ok", true));
    auto status = c.call("status");
    ASSERT_TRUE(status.value("ok", false)) << status.dump();
    EXPECT_NE(status["result"].value("state_error", "").find("state.json is corrupt"),
              std::string::npos)
        << status.dump();
    EXPECT_NE(status["result"].value("repair", "").find("state.json"), std::string::npos);
  }
  EXPECT_NE(run_sh("echo x > new.txt", in_root).exit_code, 0);
  EXPECT_TRUE(eventually_contains(root + "/.longrun/status.md", "STATE UNREADABLE"));
  std::ifstream in(root + "/.longrun/state.json");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, garbage);
  EXPECT_EQ(leasefs({"unmount", root}).exit_code, 0);
}

}  // namespace
}  // namespace leasefs::test

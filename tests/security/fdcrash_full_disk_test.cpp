// Item: a full disk. The root lies on a small ext4 file system of its own (a
// loop-mounted image); the agent (uid 65534) fills it under a lease. The control
// plane keeps working on the full disk, status says it is full, nothing reaches
// the audit as lost, and the space of a file removed underneath or through the
// mount comes back within seconds.
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/security/fdcrash_fixture.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

class FullDiskTest : public FdcrashTest {
 protected:
  void SetUp() override {
    FdcrashTest::SetUp();
    const std::string image = base + "/disk.img";
    ASSERT_EQ(run_argv({"truncate", "-s", "64M", image}).exit_code, 0);
    auto mkfs = run_argv({"mkfs.ext4", "-q", "-F", "-m", "0", image});
    ASSERT_EQ(mkfs.exit_code, 0) << mkfs.output;
    auto mnt = run_argv({"mount", "-o", "loop", image, root});
    ASSERT_EQ(mnt.exit_code, 0) << mnt.output;
    other_mounts.push_back(root);  // detached in TearDown, after the leasefs mounts
    ASSERT_EQ(
        run_sh("cd " + root + " && mkdir work edit && echo original > edit/small.txt && chown -R " +
               std::to_string(kAgentUid) + ":" + std::to_string(kAgentUid) + " work edit")
            .exit_code,
        0);
    // The tree underneath, reached through a second mount of the same file system
    // (an fd held here would make the mount refuse a busy root).
    under = base + "/under";
    ASSERT_EQ(::mkdir(under.c_str(), 0700), 0);
    ASSERT_EQ(run_argv({"mount", "--bind", root, under}).exit_code, 0);
    other_mounts.push_back(under);
  }

  // Bytes free on the file system underneath, as root sees them.
  uint64_t free_bytes() const {
    struct statvfs sv {};
    if (::statvfs(under.c_str(), &sv) != 0) return 0;
    return static_cast<uint64_t>(sv.f_bfree) * sv.f_frsize;
  }
  nlohmann::json call(const std::string& cmd, nlohmann::json args = nlohmann::json::object()) {
    try {
      ControlClient c(sock);
      return c.call(cmd, std::move(args), 20000);
    } catch (const std::exception& e) {
      return {{"ok", false}, {"error", e.what()}};
    }
  }
  // The agent's shell in the mounted root.
  RunResult as_agent(const std::string& script) {
    return run_sh_as(kAgentUid, kAgentUid, script, root, 120);
  }
  bool disk_full() {
    const nlohmann::json s = call("status");
    return s.value("ok", false) && s["result"].contains("disk") &&
           s["result"]["disk"].value("full", false);
  }
  // The agent writes until the disk is full.
  void fill(const std::string& name) {
    auto r = as_agent("head -c 200M /dev/zero > work/" + name);
    ASSERT_NE(r.exit_code, 0) << "200 MiB fit on a 64 MiB disk";
    ASSERT_NE(r.output.find("No space left"), std::string::npos) << r.output;
  }

  // work/NAME, SIZE (as head -c reads it) of random bytes, the agent's, made underneath.
  void agents_file(const std::string& name, const std::string& size) {
    const std::string path = under + "/work/" + name;
    ASSERT_EQ(run_sh("head -c " + size + " /dev/urandom > " + path + " && chown " +
                     std::to_string(kAgentUid) + " " + path)
                  .exit_code,
              0);
  }

  std::string under;  // the root beneath the mount
};

TEST_F(FullDiskTest, ControlPlaneWorksOnAFullDiskAndFreedSpaceComesBack) {
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(call("start", {{"description", "fill the disk"}}).value("ok", false));

  // Turn 1: an edit to undo later. Turn 2: the agent fills the disk.
  const nlohmann::json t1 = call("turn");
  ASSERT_TRUE(t1.value("ok", false)) << t1.dump();
  const uint64_t turn1 = t1["result"].value("turn", uint64_t{0});
  ASSERT_TRUE(call("grant", {{"reason", "edit"}}).value("ok", false));
  ASSERT_EQ(as_agent("echo edited > edit/small.txt").exit_code, 0);
  ASSERT_TRUE(call("turn").value("ok", false));
  ASSERT_TRUE(call("grant", {{"reason", "fill"}}).value("ok", false));
  fill("filler");
  std::printf("free after the fill: %llu bytes\n", static_cast<unsigned long long>(free_bytes()));
  // The room left is the control plane's: the agent's next writes get none of it.
  auto more = as_agent("head -c 8M /dev/zero > work/more");
  EXPECT_NE(more.output.find("No space left"), std::string::npos) << more.output;
  EXPECT_GE(free_bytes(), 4 * kMiB) << "the agent ate the control plane's reserve";

  // The control plane on the full disk: status, turn, grant, revoke, memory, undo.
  const nlohmann::json status = call("status");
  ASSERT_TRUE(status.value("ok", false)) << status.dump();
  EXPECT_TRUE(disk_full()) << status.dump();
  EXPECT_TRUE(wait_until([&] {
    std::ifstream in(root + "/.longrun/status.md");
    std::stringstream text;
    text << in.rdbuf();
    return text.str().find("The disk is full") != std::string::npos;
  })) << "status.md never said the disk is full";
  const nlohmann::json turn = call("turn");
  EXPECT_TRUE(turn.value("ok", false)) << turn.dump();
  const nlohmann::json grant = call("grant", {{"reason", "on a full disk"}});
  EXPECT_TRUE(grant.value("ok", false)) << grant.dump();
  const nlohmann::json revoke = call("revoke");
  EXPECT_TRUE(revoke.value("ok", false)) << revoke.dump();
  const nlohmann::json regrant = call("grant", {{"reason", "again"}});
  EXPECT_TRUE(regrant.value("ok", false)) << regrant.dump();
  const nlohmann::json note =
      call("memory.save", {{"title", "full"}, {"content", "the disk filled up"}});
  EXPECT_TRUE(note.value("ok", false)) << note.dump();
  const nlohmann::json undo = call("undo", {{"turn", turn1}, {"force", true}});
  EXPECT_TRUE(undo.value("ok", false)) << undo.dump();
  EXPECT_EQ(run_sh("cat " + root + "/edit/small.txt").output, "original\n");

  // Removed underneath: the daemon lets the file go within seconds (the kernel
  // still holds the name: nothing above touched work/).
  ASSERT_EQ(::unlink((under + "/work/filler").c_str()), 0);
  const auto removed = std::chrono::steady_clock::now();
  EXPECT_TRUE(wait_until([&] { return free_bytes() > 32 * kMiB; }))
      << "free " << free_bytes() << " bytes after the filler was removed underneath";
  std::printf("space back %lld ms after the removal underneath\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - removed)
                                         .count()));
  EXPECT_TRUE(wait_until([&] { return !disk_full(); })) << call("status").dump();

  // Filled again, then removed by root through the mount (under the lease).
  fill("filler2");
  EXPECT_TRUE(disk_full());
  auto rm = run_sh("rm " + root + "/work/filler2");
  EXPECT_EQ(rm.exit_code, 0) << rm.output;
  EXPECT_TRUE(wait_until([&] { return free_bytes() > 32 * kMiB; }))
      << "free " << free_bytes() << " bytes after the filler was removed through the mount";

  // Nothing lost: the audit chain holds, with no batch lost, and the ledger has
  // every grant.
  const nlohmann::json verify = call("audit.verify");
  EXPECT_TRUE(verify.value("ok", false)) << verify.dump();
  EXPECT_EQ(run_sh("grep -c audit_lost " + root + "/.longrun/audit.jsonl").output, "0\n");
  const nlohmann::json search = call("memory.search", {{"query", "filled"}});
  EXPECT_NE(search.dump().find("the disk filled up"), std::string::npos) << search.dump();
  // The ledger, read once the daemon is gone: four grants and the undo.
  auto stop = leasefs({"unmount", root});
  ASSERT_EQ(stop.exit_code, 0) << stop.output;
  EXPECT_EQ(run_sh("sqlite3 " + root +
                   "/.longrun/memory.db \"select kind, count(*) from ledger where kind in "
                   "('grant', 'undo') group by kind order by kind\"")
                .output,
            "grant|4\nundo|1\n");
}

// The inode cache's sweep for files with no name left runs only after a name
// was dropped through the mount, or while the disk counts as full: a filler
// removed outside the mount, with nothing dropped through it since, is let go
// all the same while the disk is full.
TEST_F(FullDiskTest, AFillerRemovedOutsideTheMountIsLetGoWhileTheDiskIsFull) {
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(call("start", {{"description", "fill the disk"}}).value("ok", false));
  ASSERT_TRUE(call("grant", {{"reason", "fill"}}).value("ok", false));
  fill("filler");
  ASSERT_TRUE(wait_until([&] { return disk_full(); })) << call("status").dump();
  // The sweeps the fill's ENOSPC asked for are over (one a second) before the
  // removal: only the full disk can bring the next.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  ASSERT_EQ(::unlink((under + "/work/filler").c_str()), 0);
  EXPECT_TRUE(wait_until([&] { return free_bytes() > 32 * kMiB; }))
      << "free " << free_bytes() << " bytes after the filler was removed underneath";
  EXPECT_TRUE(wait_until([&] { return !disk_full(); })) << call("status").dump();
}

// ENOSPC without a full disk: the agent fills one file's xattr block. The
// reserve stays and the mount keeps taking writes (an agent must not be able to
// turn the mount full at will).
TEST_F(FullDiskTest, AnEnospcWithRoomOnTheDiskLeavesTheMountWritable) {
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(call("start", {{"description", "xattrs"}}).value("ok", false));
  ASSERT_TRUE(call("grant", {{"reason", "xattrs"}}).value("ok", false));
  auto x = as_agent(
      "touch work/x && v=$(head -c 200 /dev/zero | tr '\\0' v) && i=0 && "
      "while setfattr -n user.a$i -v $v work/x; do i=$((i+1)); done");
  ASSERT_NE(x.output.find("No space left"), std::string::npos) << x.output;
  const nlohmann::json status = call("status");
  EXPECT_EQ(status["result"]["disk"].value("reserve_given_up", -1), 0) << status.dump();
  EXPECT_FALSE(disk_full()) << status.dump();
  auto w = as_agent("echo still > work/y && cat work/y");
  EXPECT_EQ(w.output, "still\n");
}

// Issue 43's story: a 10 MiB file of the agent's, one byte appended under a
// grant in each of six turns. Each append once cost the journal a 10 MiB copy,
// and the fifth met ENOSPC and left the mount full for good. An append keeps
// only the old length: the disk never fills and every append lands.
TEST_F(FullDiskTest, AppendsOverManyTurnsNeverFillTheDisk) {
  ASSERT_NO_FATAL_FAILURE(agents_file("big", "10M"));
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(call("start", {{"description", "appends"}}).value("ok", false));
  for (int turn = 1; turn <= 6; ++turn) {
    ASSERT_TRUE(call("turn").value("ok", false));
    ASSERT_TRUE(call("grant", {{"reason", "append"}}).value("ok", false));
    auto a = as_agent("printf x >> work/big");
    EXPECT_EQ(a.exit_code, 0) << "turn " << turn << ": " << a.output;
    EXPECT_FALSE(disk_full()) << "turn " << turn;
  }
  EXPECT_EQ(run_sh("stat -c %s " + under + "/work/big").output,
            std::to_string((10 << 20) + 6) + "\n");
  const nlohmann::json st = call("status");
  EXPECT_LT(st["result"]["journal"].value("older_turns_bytes", uint64_t{0}), kMiB) << st.dump();
}

// The journal leaves the disk its floor: rewrites of a large file (copies)
// become "not undoable: the disk is nearly full" instead of taking the last space.
TEST_F(FullDiskTest, TheJournalNeverTakesTheDisksLastSpace) {
  ASSERT_NO_FATAL_FAILURE(agents_file("big", "12M"));
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(call("start", {{"description", "rewrites"}}).value("ok", false));
  // The agent keeps its own copies too: the disk fills from both sides.
  bool nearly_full_said = false;
  for (int turn = 1; turn <= 4; ++turn) {
    ASSERT_TRUE(call("turn").value("ok", false));
    ASSERT_TRUE(call("grant", {{"reason", "rewrite"}}).value("ok", false));
    auto a = as_agent(
        "head -c 1 /dev/zero | dd of=work/big conv=notrunc status=none && "
        "head -c 6M /dev/zero > work/copy" +
        std::to_string(turn));
    EXPECT_EQ(a.exit_code, 0) << "turn " << turn << ": " << a.output;
    EXPECT_FALSE(disk_full()) << "turn " << turn << ": " << call("status").dump();
    const nlohmann::json st = call("status");
    for (const auto& p : st["result"]["journal"].value("not_undoable", nlohmann::json::array())) {
      if (p == "work/big") nearly_full_said = true;
    }
  }
  EXPECT_TRUE(nearly_full_said) << "every rewrite was copied: the test filled nothing";
}

// The approver gets the journal's space back with one command, which says what
// can no longer be undone, and writes open again under the grant.
TEST_F(FullDiskTest, JournalPruneFreesTheDiskAndWritesOpenAgain) {
  ASSERT_NO_FATAL_FAILURE(agents_file("mid", "8M"));
  auto r = leasefs({"mount", root, "--socket", sock});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(call("start", {{"description", "prune"}}).value("ok", false));
  ASSERT_TRUE(call("turn").value("ok", false));
  ASSERT_TRUE(call("grant", {{"reason", "rewrite"}}).value("ok", false));
  ASSERT_EQ(as_agent("head -c 8M /dev/zero > work/mid").exit_code, 0);  // a copy kept
  ASSERT_TRUE(call("turn").value("ok", false));
  ASSERT_TRUE(call("grant", {{"reason", "fill"}}).value("ok", false));
  fill("filler");
  ASSERT_TRUE(disk_full());
  EXPECT_NE(as_agent("echo more > work/more").exit_code, 0);
  const nlohmann::json st = call("status");
  EXPECT_GE(st["result"]["journal"].value("older_turns_bytes", uint64_t{0}), 8 * kMiB) << st.dump();
  // What the person reads: the terminal's status says what holds the space.
  auto shown = run_binary(LEASECTL_BIN, {"--socket", sock, "status"});
  EXPECT_NE(shown.output.find("leasectl journal prune"), std::string::npos) << shown.output;
  const nlohmann::json pruned = call("journal.prune", {{"reason", "the disk is full"}});
  ASSERT_TRUE(pruned.value("ok", false)) << pruned.dump();
  EXPECT_GE(pruned["result"].value("bytes", uint64_t{0}), 8 * kMiB) << pruned.dump();
  EXPECT_NE(pruned.dump().find("work/mid"), std::string::npos) << "not said what is lost";
  EXPECT_TRUE(wait_until([&] { return !disk_full(); })) << call("status").dump();
  auto again = as_agent("echo more > work/more");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  // The pruned turn is gone for good, and says so.
  const nlohmann::json undo = call("undo", {{"turn", 1}});
  EXPECT_FALSE(undo.value("ok", true)) << undo.dump();
  // In the audit chain, once its writer's batch is out.
  EXPECT_TRUE(wait_until([&] {
    return run_sh("grep -q journal_pruned " + root + "/.longrun/audit.jsonl").exit_code == 0;
  })) << "the prune is not in the audit";
}

}  // namespace
}  // namespace leasefs::test

// A descriptor the agent kept on a temporary sibling, once that sibling has
// outlived its lease and moved into `.longrun/journal/<turn>/b<seq>` (I5): under
// any later grant, however wide, nothing written, truncated, allocated, copied
// or re-moded through the old descriptor may reach the journal's blob, which
// `diff` shows a person as what the agent left and undo may put back.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/agentuser_daemons.hpp"
#include "tests/support/journal_fixture.hpp"
#include "tests/support/run.hpp"

namespace leasefs::test {
namespace {

namespace stdfs = std::filesystem;

class JournalLeftoverFd : public JournalTest {
 protected:
  // The blobs of `turn`'s journal, by name.
  std::vector<std::string> blobs(uint64_t turn) {
    std::vector<std::string> out;
    const std::string dir = root + "/.longrun/journal/" + std::to_string(turn);
    std::error_code ec;
    for (const auto& e : stdfs::directory_iterator(dir, ec)) {
      if (e.path().filename().string().starts_with("b")) out.push_back(e.path().string());
    }
    return out;
  }
  void old_descriptor_changes_nothing(bool default_protect);
};

// The agent's script: it makes its temporary and writes a draft, says so, waits
// for the go, then tries every way to change the file through the descriptor.
// Prints one "name=errno" word per attempt (0: it worked).
constexpr const char* kKeptFd = R"py(
import errno, os, sys
fd = os.open(".a.conf.tmp", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"draft\n")
open(sys.argv[1], "w").close()
with open(sys.argv[2]) as go:
    go.read()
src = os.open("src.txt", os.O_RDONLY)
def attempt(name, fn):
    try:
        fn()
        print(name + "=0", end=" ")
    except OSError as e:
        print(name + "=" + str(e.errno), end=" ")
attempt("pwrite", lambda: os.pwrite(fd, b"INJECTED\n", 0))
attempt("write", lambda: os.write(fd, b"INJECTED\n"))
attempt("ftruncate", lambda: os.ftruncate(fd, 1))
attempt("fallocate", lambda: os.posix_fallocate(fd, 0, 1 << 20))
attempt("copy_file_range", lambda: os.copy_file_range(src, fd, 9, 0, 0))
attempt("fchmod", lambda: os.fchmod(fd, 0o4755))
attempt("fsync", lambda: os.fsync(fd))
print()
)py";

void JournalLeftoverFd::old_descriptor_changes_nothing(bool default_protect) {
  ASSERT_EQ(sh("echo x=1 > a.conf && echo INJECTED-BY-COPY > src.txt && chown -R 65534:65534 .")
                .exit_code,
            0);
  std::vector<std::string> extra;
  if (!default_protect) extra.push_back("--no-default-protect");
  mount(extra);
  ok("start", {{"description", "kept descriptor"}});
  const uint64_t turn = ok("turn").value("turn", uint64_t{0});
  ok("grant", {{"reason", "edit a.conf"}, {"paths", {"a.conf"}}, {"ops", {"write"}}});
  // The agent's own directory outside the root: its script, its "ready" and the go.
  const std::string own = base + "/agent";
  const std::string ready = own + "/ready";
  ASSERT_EQ(run_sh("mkdir -m 777 " + own + " && mkfifo -m 666 " + own + "/go").exit_code, 0);
  RunResult agent;
  std::thread agent_thread([&] {
    std::ofstream(own + "/kept_fd.py") << kKeptFd;
    agent = run_sh_as(kAgentUid, kAgentUid,
                      "python3 " + own + "/kept_fd.py " + ready + " " + own + "/go", root);
  });
  for (int i = 0; i < 600 && !stdfs::exists(ready); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const bool agent_ready = stdfs::exists(ready);
  if (agent_ready) {
    ok("revoke");
    // The approver now grants the whole tree for writing: the widest lease there is.
    ok("grant", {{"reason", "anything"}});
  }
  // The go ends the agent's wait, whatever happened above.
  run_sh("echo go > " + own + "/go");
  agent_thread.join();
  ASSERT_TRUE(agent_ready) << agent.output;
  ASSERT_EQ(agent.exit_code, 0) << agent.output;
  EXPECT_FALSE(stdfs::exists(root + "/.a.conf.tmp")) << "the sibling is still in the tree";
  for (const std::string op :
       {"pwrite", "write", "ftruncate", "fallocate", "copy_file_range", "fchmod"}) {
    EXPECT_EQ(agent.output.find(op + "=0 "), std::string::npos)
        << op << " through the old descriptor worked: " << agent.output;
  }
  const std::vector<std::string> kept = blobs(turn);
  ASSERT_EQ(kept.size(), 1u) << "the leftover's blob";
  std::ifstream in(kept[0], std::ios::binary);
  const std::string content((std::istreambuf_iterator<char>(in)), {});
  // (Not EXPECT_EQ: a failure must not print a megabyte of what was allocated.)
  EXPECT_TRUE(content == "draft\n")
      << content.size() << " bytes, starting " << content.substr(0, 16);
  struct stat st {};
  ASSERT_EQ(::stat(kept[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u) << "the blob is the daemon's, without a set-id bit";
  EXPECT_EQ(st.st_uid, 0u);
  const std::string diff = ok("diff", {{"turn", turn}}).value("text", std::string());
  EXPECT_EQ(diff.find("INJECTED"), std::string::npos) << diff;
}

TEST_F(JournalLeftoverFd, AnOldDescriptorChangesNothingInTheJournalWithoutProtectedGlobs) {
  old_descriptor_changes_nothing(false);
}

TEST_F(JournalLeftoverFd, AnOldDescriptorChangesNothingInTheJournalWithProtectedGlobs) {
  old_descriptor_changes_nothing(true);
}

// A grant with a TTL ends with nobody calling: its temporary siblings are taken
// out of the tree then, as at a revoke, and a later grant of the turn does not
// bring them back (the daemon publishes at every expiry).
TEST_F(JournalLeftoverFd, AnExpiredGrantsSiblingLeavesTheTreeWhenItExpires) {
  ASSERT_EQ(sh("echo x=1 > a.conf && chown -R 65534:65534 .").exit_code, 0);
  mount();
  ok("start", {{"description", "ttl"}});
  const uint64_t turn = ok("turn").value("turn", uint64_t{0});
  ok("grant",
     {{"reason", "edit a.conf"}, {"paths", {"a.conf"}}, {"ops", {"write"}}, {"ttl", "2s"}});
  ASSERT_EQ(run_sh_as(kAgentUid, kAgentUid, "echo draft > .a.conf.tmp", root).exit_code, 0);
  ASSERT_TRUE(stdfs::exists(root + "/.a.conf.tmp"));
  // No command after the grant: only its expiry can take the sibling out.
  EXPECT_TRUE(wait_until([&] { return !stdfs::exists(root + "/.a.conf.tmp"); }, 20))
      << "the sibling outlived its grant's TTL";
  EXPECT_EQ(blobs(turn).size(), 1u);
  const std::string md = read_text(root + "/.longrun/status.md");
  EXPECT_NE(md.find("expired"), std::string::npos) << md;
  ok("grant", {{"reason", "again"}, {"paths", {"a.conf"}}, {"ops", {"write"}}});
  RunResult r = run_sh_as(kAgentUid, kAgentUid, "echo x=2 > .a.conf.tmp", root);
  EXPECT_EQ(r.exit_code, 0) << r.output;  // a new temporary, not the old one back
  EXPECT_EQ(read_text(root + "/.a.conf.tmp"), "x=2\n");
  // The audit is written a few milliseconds behind.
  EXPECT_TRUE(wait_until(
      [&] {
        return read_text(root + "/.longrun/audit.jsonl").find("grant_expired") != std::string::npos;
      },
      20));
}

}  // namespace
}  // namespace leasefs::test

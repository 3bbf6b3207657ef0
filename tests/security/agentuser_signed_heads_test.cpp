// F5 signed turns, on a real daemon and mount: each turn's end leaves one signed
// head in .longrun/signed_heads, `leasectl audit verify --key` checks them
// against the chain, any one byte changed in the chain or the heads is found,
// a key someone else could read or write is never used, and the agent (a real
// second uid) can neither add nor change a head, nor read the key.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/agentuser_daemons.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

class SignedHeadsTest : public AgentUserTest {
 protected:
  void SetUp() override {
    ::mkdir(keys.c_str(), 0755);
    ::mkdir(root.c_str(), 0755);
    ::mkdir(mnt.c_str(), 0755);
    std::ofstream(root + "/a.txt") << "timeout = 10\n";
  }

  // Every tool runs in the test's directory, never in an empty one.
  RunResult tool(std::vector<std::string> argv) {
    RunOptions o;
    o.cwd = base;
    o.timeout_s = 60;
    return run_argv(argv, o);
  }
  RunResult ctl(std::vector<std::string> args) {
    args.insert(args.begin(), {LEASECTL_PATH, "--socket", sock});
    return tool(args);
  }
  // `leasefs keygen --key PATH`; the verifier key it wrote beside the key.
  std::string keygen(const std::string& path) {
    RunResult r = tool({LEASEFS_BIN, "keygen", "--key", path});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::string vkey;
    std::getline(std::ifstream(path + ".pub"), vkey);
    EXPECT_NE(r.output.find(vkey), std::string::npos) << r.output;
    return vkey;
  }
  // ROOT mounted at MNT, so that the test (root) reaches the files underneath.
  void mount_apart(const std::string& key_path) {
    mounts.push_back(mnt);
    RunResult r =
        tool({LEASEFS_BIN, "mount", root, mnt, "--socket", sock, "--signing-key", key_path});
    remember_daemon(root);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  // Signed heads in the file: one signature line each.
  static size_t heads_in(const std::string& path) {
    std::ifstream in(path);
    size_t n = 0;
    for (std::string line; std::getline(in, line);) n += line.rfind("\xe2\x80\x94 ", 0) == 0;
    return n;
  }
  // Waits (bounded) until the heads file holds `n` heads.
  static bool wait_heads(const std::string& path, size_t n) {
    for (int i = 0; i < 500; ++i) {
      if (heads_in(path) >= n) return heads_in(path) == n;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  // Waits (bounded) until the audit log holds `text`.
  static bool wait_audit(const std::string& log, const std::string& text) {
    for (int i = 0; i < 500; ++i) {
      if (read_text(log).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  // Waits (bounded) until the file at `path` holds `text` (`holds`) or does not.
  static bool wait_text(const std::string& path, const std::string& text, bool holds = true) {
    for (int i = 0; i < 500; ++i) {
      if ((read_text(path).find(text) != std::string::npos) == holds) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  // `start`, then `turns` turns, each waited for until its head is signed.
  void turns(size_t turns, const std::string& heads) {
    RunResult r = ctl({"start", "signed turns"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (size_t i = 1; i <= turns; ++i) {
      r = ctl({i % 2 ? "turn" : "end-turn"});
      ASSERT_EQ(r.exit_code, 0) << r.output;
      ASSERT_TRUE(wait_heads(heads, i)) << heads_in(heads) << " heads after turn " << i;
    }
  }

  std::string keys = base + "/keys";
  std::string key = keys + "/audit-signing.key";
  std::string root = base + "/root";
  std::string mnt = base + "/mnt";
  std::string sock = base + "/ctl.sock";
  std::string heads = root + "/.longrun/signed_heads";
  std::string log = root + "/.longrun/audit.jsonl";
};

TEST_F(SignedHeadsTest, F5_EachTurnEndsWithOneSignedHeadThatVerifies) {
  const std::string vkey = keygen(key);
  ASSERT_NO_FATAL_FAILURE(mount_apart(key));
  RunResult status = ctl({"--json", "status"});
  EXPECT_NE(status.output.find("\"verifier_key\":\"" + vkey + "\""), std::string::npos)
      << status.output;
  ASSERT_NO_FATAL_FAILURE(turns(4, heads));

  // Each head is recorded in the chain after it, with the size it signed (a
  // moment after the head itself is in its file).
  auto recorded = [&] {
    const std::string text = read_text(log);
    size_t n = 0;
    for (size_t at = text.find("\"type\":\"head_signed\""); at != std::string::npos;
         at = text.find("\"type\":\"head_signed\"", at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_TRUE(wait_until([&] { return recorded() >= 4; }, 20));
  EXPECT_EQ(recorded(), 4u);
  const std::string audit = read_text(log);
  // Named by the turn that ended: `turn` ends the one before it, `end-turn` its own.
  for (const char* ended :
       {"\"turn\":0,\"type\":\"head_signed\"", "\"turn\":2,\"type\":\"head_signed\""}) {
    EXPECT_NE(audit.find(ended), std::string::npos) << ended;
  }
  // A checkpoint keeps the turn; a resume begins the next, and a completed task
  // has no turn after its last.
  RunResult r =
      ctl({"checkpoint", "--summary", "half done", "--next", "the rest", "--status", "paused"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = ctl({"resume"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(wait_heads(heads, 5));
  r = ctl({"transition", "completed", "--reason", "done"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(wait_heads(heads, 6));

  RunResult v = ctl({"audit", "verify", "--key", key + ".pub"});
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_NE(v.output.find("signed heads verified: 6"), std::string::npos) << v.output;
  v = ctl({"audit", "verify", "--key", vkey});  // the key's text, not a file
  EXPECT_EQ(v.exit_code, 0) << v.output;
  v = ctl({"audit", "verify"});
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_NE(v.output.find("signed heads not checked: 6"), std::string::npos) << v.output;
}

// `audit verify --key` while turns end as fast as they come: the chain and the
// heads are read together, so a turn's end is never seen without its head.
TEST_F(SignedHeadsTest, F5_VerifyWhileTurnsEndNeverSeesATurnWithoutItsHead) {
  keygen(key);
  ASSERT_NO_FATAL_FAILURE(mount_apart(key));
  ASSERT_EQ(ctl({"start", "signed turns"}).exit_code, 0);
  std::atomic<bool> done{false};
  std::vector<std::string> failures;
  size_t verified = 0;
  std::thread verifier([&] {
    while (!done.load()) {
      RunResult v = ctl({"audit", "verify", "--key", key + ".pub"});
      if (v.exit_code != 0) failures.push_back(v.output);
      ++verified;
    }
  });
  for (int i = 0; i < 40; ++i) EXPECT_EQ(ctl({i % 2 ? "end-turn" : "turn"}).exit_code, 0);
  done = true;
  verifier.join();
  EXPECT_GT(verified, 0u);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failed, the first: " << failures.front();
  EXPECT_TRUE(wait_text(log, "\"turn\":20,\"type\":\"head_signed\""));
  RunResult v = ctl({"audit", "verify", "--key", key + ".pub"});
  EXPECT_EQ(v.exit_code, 0) << v.output;
}

// Every single byte of audit.jsonl and of signed_heads, changed in turn under the
// live daemon: audit.verify with the key fails for each, and passes once it is
// put back. One connection asks them all: a leasectl per byte would be thousands
// of processes (too slow under the sanitizers); leasectl's exit is checked at
// both ends.
TEST_F(SignedHeadsTest, F5_AnyByteChangedInTheChainOrTheHeadsFailsVerify) {
  const std::string vkey = keygen(key);
  ASSERT_NO_FATAL_FAILURE(mount_apart(key));
  ASSERT_NO_FATAL_FAILURE(turns(2, heads));
  ASSERT_EQ(ctl({"audit", "verify", "--key", key + ".pub"}).exit_code, 0);
  ControlClient client(sock);

  for (const std::string& path : {heads, log}) {
    const std::string original = read_text(path);
    ASSERT_FALSE(original.empty()) << path;
    size_t passed = 0;
    for (size_t i = 0; i < original.size(); ++i) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      ASSERT_GE(fd, 0) << path;
      const char changed = static_cast<char>(original[i] ^ 0x01);
      ASSERT_EQ(::pwrite(fd, &changed, 1, static_cast<off_t>(i)), 1);
      const nlohmann::json v = client.call("audit.verify", {{"key", vkey}});
      const char back = original[i];
      ASSERT_EQ(::pwrite(fd, &back, 1, static_cast<off_t>(i)), 1);
      ::close(fd);
      if (v.value("ok", false)) ++passed;
      EXPECT_EQ(v.value("error", nlohmann::json::object()).value("code", ""), "audit_broken")
          << path << ": byte " << i << " of " << original.size() << " changed: " << v.dump();
    }
    EXPECT_EQ(passed, 0u) << path;
    ASSERT_EQ(read_text(path), original);
  }
  RunResult v = ctl({"audit", "verify", "--key", key + ".pub"});
  EXPECT_EQ(v.exit_code, 0) << v.output;
}

TEST_F(SignedHeadsTest, F5_AWrongKeyFailsVerify) {
  keygen(key);
  const std::string other = keygen(keys + "/other.key");
  ASSERT_NO_FATAL_FAILURE(mount_apart(key));
  ASSERT_NO_FATAL_FAILURE(turns(1, heads));
  RunResult v = ctl({"audit", "verify", "--key", other});
  EXPECT_EQ(v.exit_code, 1) << v.output;
  EXPECT_NE(v.output.find("bad_signature"), std::string::npos) << v.output;
  EXPECT_NE(v.output.find("line 1"), std::string::npos) << v.output;
  v = ctl({"audit", "verify", "--key", "not-a-key"});
  EXPECT_EQ(v.exit_code, 1) << v.output;
  EXPECT_NE(v.output.find("invalid_argument"), std::string::npos) << v.output;
}

// A key the group or others may read is never used: the mount goes on, heads
// go unsigned, the log, status and status.md say why; once it is made 0600 the
// next turn's head is signed.
TEST_F(SignedHeadsTest, F5_AKeyReadableByOthersIsRefusedAndSaid) {
  keygen(key);
  ASSERT_EQ(::chmod(key.c_str(), 0644), 0);
  ASSERT_NO_FATAL_FAILURE(mount_apart(key));
  RunResult status = ctl({"status"});
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("audit heads unsigned: refusing the key " + key), std::string::npos)
      << status.output;
  EXPECT_NE(status.output.find("lets group or others read or write it"), std::string::npos)
      << status.output;
  ASSERT_EQ(ctl({"start", "signed turns"}).exit_code, 0);
  ASSERT_EQ(ctl({"turn"}).exit_code, 0);
  ASSERT_TRUE(wait_audit(log, "\"type\":\"head_unsigned\""));
  EXPECT_EQ(heads_in(heads), 0u);
  EXPECT_TRUE(wait_text(root + "/.longrun/status.md", "audit heads unsigned: refusing the key"));
  RunResult v = ctl({"audit", "verify", "--key", key + ".pub"});
  EXPECT_EQ(v.exit_code, 1) << v.output;
  EXPECT_NE(v.output.find("silence"), std::string::npos) << v.output;

  ASSERT_EQ(::chmod(key.c_str(), 0600), 0);
  ASSERT_EQ(ctl({"turn"}).exit_code, 0);
  ASSERT_TRUE(wait_heads(heads, 1));
  v = ctl({"audit", "verify", "--key", key + ".pub"});
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_TRUE(wait_text(root + "/.longrun/status.md", "audit heads unsigned", false));
}

// No key: the mount goes on and says how to make one; `leasefs keygen` while it
// runs takes effect at the next turn's end.
TEST_F(SignedHeadsTest, F5_NoKeyLeavesHeadsUnsignedUntilKeygen) {
  ASSERT_NO_FATAL_FAILURE(mount_apart(key));
  RunResult status = ctl({"status"});
  EXPECT_NE(status.output.find("audit heads unsigned: no key at " + key + "; run `leasefs keygen`"),
            std::string::npos)
      << status.output;
  ASSERT_EQ(ctl({"start", "signed turns"}).exit_code, 0);
  ASSERT_EQ(ctl({"turn"}).exit_code, 0);
  ASSERT_TRUE(wait_audit(log, "\"type\":\"head_unsigned\""));
  keygen(key);
  ASSERT_EQ(ctl({"end-turn"}).exit_code, 0);
  ASSERT_TRUE(wait_heads(heads, 1));
  EXPECT_EQ(ctl({"audit", "verify", "--key", key + ".pub"}).exit_code, 0);
}

// The agent, as its own uid with a shell in the tree and even with a lease for
// everything, cannot add or change a signed head, nor read or replace the key.
TEST_F(SignedHeadsTest, F5_TheAgentCannotWriteTheHeadsNorTouchTheKey) {
  const auto [uid, gid] = add_user("lfssign");
  ASSERT_FALSE(users.empty());
  const std::string agent = users.back();
  ASSERT_EQ(tool({"chown", "-R", agent + ":", root}).exit_code, 0);
  keygen(key);
  mounts.push_back(root);
  RunResult r =
      tool({LEASEFS_BIN, "mount", root, "--socket", sock, "--agent", agent, "--signing-key", key});
  remember_daemon(root);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(base::leasefs_mount_at(root));
  ASSERT_NO_FATAL_FAILURE(turns(1, heads));
  const std::string before = read_text(heads);

  // A lease for the whole tree: .longrun stays closed all the same (I5).
  r = ctl({"grant", "--reason", "edit anything"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string forged = "x\n1\nAAAA\n\n\xe2\x80\x94 x AAAA\n\n";
  for (const std::string& attack : std::vector<std::string>{
           "printf '" + forged + "' >> .longrun/signed_heads",
           "printf '' > .longrun/signed_heads",
           "sed -i 's/^/x/' .longrun/signed_heads",
           "cp a.txt .longrun/signed_heads",
           "mv a.txt .longrun/signed_heads",
           "rm -f .longrun/signed_heads",
           "python3 -c 'open(\".longrun/signed_heads\", \"a\").write(\"x\")'",
           "cat " + q(key),
           "cp " + q(key) + " stolen.key",
           "printf x > " + q(key),
           "rm -f " + q(key),
           "mv a.txt " + q(key),
           "ln -s /tmp/x " + q(keys + "/x.key"),
       }) {
    RunResult a = as_user(uid, gid, attack, root);
    EXPECT_NE(a.exit_code, 0) << attack << ": " << a.output;
  }
  EXPECT_EQ(read_text(heads), before);
  struct stat st {};
  ASSERT_EQ(::stat(key.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_NE(::access((root + "/stolen.key").c_str(), F_OK), 0);

  // The agent may check the heads itself, with the public verifier key.
  r = as_user(uid, gid, q(LEASECTL_PATH) + " audit verify --key " + q(key + ".pub"), root);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("signed heads verified: 1"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace leasefs::test

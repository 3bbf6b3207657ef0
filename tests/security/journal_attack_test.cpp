// The journal against an agent running as a second uid (65534): it can neither
// read nor write .longrun/journal through the mount, cannot undo, cannot read
// through `diff` a file it could never read, and cannot make an undo write
// outside the root by planting a symlink where a journaled directory was, nor
// keep a file of its own inside a directory that a person puts back with undo.
#include <gtest/gtest.h>

#include "tests/support/journal_fixture.hpp"
#include "tests/support/run.hpp"

namespace leasefs::test {
namespace {

class JournalAttack : public JournalTest {
 protected:
  RunResult as_agent(const std::string& script) {
    return run_sh_as(kAgentUid, kAgentUid, script, root);
  }
  // One request on the control socket as the agent; the reply line.
  nlohmann::json agent_call(const std::string& cmd, const nlohmann::json& args) {
    ::chmod(sock.c_str(), 0666);  // the agent may connect; the daemon judges its uid
    nlohmann::json req = {{"id", 1}, {"cmd", cmd}, {"args", args}};
    RunResult r = as_agent(
        "python3 -c 'import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
        "s.sendall(sys.argv[2].encode()+b\"\\n\")\n"
        "f=s.makefile()\nfor line in f:\n    if \"\\\"id\\\":1\" in line.replace(\" \",\"\"):\n"
        "        print(line.strip()); break' " +
        sock + " '" + req.dump() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output, nullptr, false);
  }
};

TEST_F(JournalAttack, JournalIsNeitherReadableNorWritableByTheAgent) {
  ASSERT_EQ(run_sh("echo secret-old > " + root + "/f && chmod 644 " + root + "/f").exit_code, 0);
  mount();
  const uint64_t t = leased_turn();
  ASSERT_EQ(sh("echo new > f").exit_code, 0);
  const std::string dir = ".longrun/journal/" + std::to_string(t);
  // The journal exists (the daemon's view through the same mount, as root).
  struct stat st {};
  ASSERT_EQ(::stat((root + "/" + dir + "/index.jsonl").c_str(), &st), 0) << "no journal kept";
  for (const std::string& probe :
       std::vector<std::string>{"ls .longrun/journal", "cat " + dir + "/index.jsonl",
                                "cat " + dir + "/b1", "echo x >> " + dir + "/index.jsonl",
                                "rm -rf .longrun/journal", "mkdir .longrun/journal/999"}) {
    RunResult r = as_agent(probe);
    EXPECT_NE(r.exit_code, 0) << probe << ": " << r.output;
    EXPECT_EQ(r.output.find("secret-old"), std::string::npos) << probe << ": " << r.output;
  }
  EXPECT_EQ(::stat((root + "/.longrun/journal/999").c_str(), &st), -1);
}

TEST_F(JournalAttack, AgentCannotUndo) {
  ASSERT_EQ(run_sh("echo 0 > " + root + "/a && chmod 666 " + root + "/a").exit_code, 0);
  mount();
  const uint64_t t = leased_turn();
  ASSERT_EQ(sh("echo 1 > a").exit_code, 0);
  ok("turn");
  nlohmann::json r = agent_call("undo", {{"turn", t}});
  ASSERT_TRUE(r.is_object()) << r.dump();
  EXPECT_FALSE(r.value("ok", true)) << r.dump();
  EXPECT_EQ(r["error"].value("code", ""), "forbidden") << r.dump();
  EXPECT_EQ(sh("cat a").output, "1\n");
  // diff is open to whoever may read status.
  nlohmann::json d = agent_call("diff", {{"turn", t}});
  EXPECT_TRUE(d.value("ok", false)) << d.dump();
}

TEST_F(JournalAttack, DiffShowsTheAgentNoContentItCouldNotRead) {
  ASSERT_EQ(run_sh("cd " + root + " && echo root-only-secret > s && chmod 600 s").exit_code, 0);
  mount();
  const uint64_t t = leased_turn();
  ASSERT_EQ(sh("echo replaced > s && chmod 644 s").exit_code, 0);
  ASSERT_EQ(as_agent("cat s").output, "replaced\n");  // now readable, the old content was not
  nlohmann::json d = agent_call("diff", {{"turn", t}});
  ASSERT_TRUE(d.value("ok", false)) << d.dump();
  const std::string text = d["result"].value("text", std::string());
  EXPECT_EQ(text.find("root-only-secret"), std::string::npos) << text;
  EXPECT_NE(text.find("not shown"), std::string::npos) << text;
  // An approver sees it.
  EXPECT_NE(ok("diff", {{"turn", t}}).value("text", std::string()).find("-root-only-secret"),
            std::string::npos);
}

TEST_F(JournalAttack, UndoFollowsNoSymlinkOutOfTheRoot) {
  const std::string outside = base + "/outside";
  ASSERT_EQ(run_sh("mkdir -p " + outside + " && echo precious > " + outside + "/f").exit_code, 0);
  ASSERT_EQ(run_sh("chmod 777 " + root).exit_code, 0);
  mount();
  // Turn 1: the agent creates d/f. Turn 2: it swaps d for a symlink to a
  // directory outside the root that also has an f.
  const uint64_t t1 = leased_turn();
  ASSERT_EQ(as_agent("mkdir d && echo mine > d/f").exit_code, 0);
  leased_turn();
  ASSERT_EQ(as_agent("rm -rf d && ln -s " + outside + " d").exit_code, 0);
  ok("turn");
  nlohmann::json u = ok("undo", {{"turn", t1}, {"force", true}});
  EXPECT_TRUE(u.value("applied", false)) << u.dump();
  EXPECT_EQ(run_sh("cat " + outside + "/f").output, "precious\n");
  struct stat st {};
  EXPECT_NE(::lstat((root + "/d").c_str(), &st), 0) << "d is still there";
}

// The agent names its file with bytes that are not UTF-8 (b"evil\xff"), whose
// text for people is that of the person's own file "evil\uFFFD". The journal
// must keep the agent's name exactly: a lossy one would make undo remove the
// person's file instead of the agent's (and before, the agent's leased create
// failed with EIO). It also renames the person's file to such a name.
TEST_F(JournalAttack, NamesThatAreNotUtf8AreUndoneExactly) {
  ASSERT_EQ(run_sh("chmod 777 " + root + " && cd " + root +
                   " && printf person > \"$(printf 'evil\\357\\277\\275')\" && printf kept > keep"
                   " && chmod 666 keep")
                .exit_code,
            0);
  mount();
  const uint64_t turn = leased_turn();
  RunResult r = as_agent(
      "python3 -c \"import os\nopen(b'evil\\xff','wb').write(b'agent')\n"
      "os.rename(b'keep', b'k\\xfe')\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ok("turn");
  nlohmann::json u = ok("undo", {{"turn", turn}});
  EXPECT_TRUE(u.value("applied", false)) << u.dump();
  RunResult ls = run_sh("cd " + root +
                        " && python3 -c \"import os\n"
                        "print(sorted(n for n in os.listdir(b'.') if n != b'.longrun'))\"");
  EXPECT_EQ(ls.output, "[b'evil\\xef\\xbf\\xbd', b'keep']\n");
  EXPECT_EQ(run_sh("cat " + root + "/keep").output, "kept");
  EXPECT_EQ(run_sh("cat " + root + "/evil*").output, "person");
}

// The agent, with a lease, swaps a directory of the project for one of its own
// (renameat2 RENAME_EXCHANGE), so that its file now sits inside src. An undo of
// the turn must put src back as it was, without the agent's file.
TEST_F(JournalAttack, AnExchangeOfDirectoriesLeavesNothingBehindAnUndo) {
  ASSERT_EQ(run_sh("cd " + root + " && mkdir src && echo 'int main;' > src/a.c && chmod 777 . src")
                .exit_code,
            0);
  mount();
  const uint64_t t = leased_turn();
  ASSERT_EQ(as_agent("mkdir mine && echo payload > mine/hook.sh && python3 -c \"import ctypes, "
                     "sys; libc = ctypes.CDLL(None, use_errno=True); sys.exit(libc.renameat2("
                     "-100, b'src', -100, b'mine', 2) and ctypes.get_errno())\"")
                .exit_code,
            0);
  ASSERT_EQ(sh("cat src/hook.sh").output, "payload\n");
  ok("turn");
  nlohmann::json u = ok("undo", {{"turn", t}});
  EXPECT_TRUE(u.value("applied", false)) << u.dump();
  EXPECT_EQ(sh("cat src/a.c").output, "int main;\n");
  struct stat st {};
  EXPECT_NE(::lstat((root + "/src/hook.sh").c_str(), &st), 0)
      << "the agent's file survived the undo";
  EXPECT_NE(::lstat((root + "/mine").c_str(), &st), 0) << "the agent's directory survived the undo";
}

// Under a grant for src/a.conf the agent may edit a.conf the way tools do, but the
// files it creates beside it (which the person never named) do not outlive the
// turn, whether it ends by `end-turn` or by `turn`: they move into the journal,
// where `diff` shows them, and no later `git add -A` can pick them up.
TEST_F(JournalAttack, APathGrantLeavesNoFileThePersonDidNotName) {
  ASSERT_EQ(run_sh("cd " + root + " && mkdir src && echo x=1 > src/a.conf && chmod 777 src && " +
                   "chmod 666 src/a.conf")
                .exit_code,
            0);
  mount();
  ok("start", {{"description", "leftovers"}});
  for (const std::string ender : {"end-turn", "turn"}) {
    const uint64_t t = ok("turn").value("turn", uint64_t{0});
    ok("grant", {{"reason", "edit a.conf"}, {"paths", {"src/a.conf"}}});
    ASSERT_EQ(as_agent("sed -i s/x=1/x=2/ src/a.conf && echo 'import os' > src/evil.py && "
                       "printf '#!/bin/sh\\nid\\n' > src/.hidden.sh && chmod 755 src/.hidden.sh")
                  .exit_code,
              0)
        << ender;
    ok(ender);
    EXPECT_EQ(sh("ls -A src").output, "a.conf\n") << ender;
    EXPECT_EQ(sh("cat src/a.conf").output, "x=2\n") << ender;
    // Nothing is lost: diff shows what the agent left, with its content.
    nlohmann::json d = ok("diff", {{"turn", t}});
    const std::string text = d.value("text", std::string());
    EXPECT_NE(text.find("src/evil.py"), std::string::npos) << ender << ": " << text;
    EXPECT_NE(text.find("+import os"), std::string::npos) << ender << ": " << text;
    EXPECT_NE(text.find("src/.hidden.sh"), std::string::npos) << ender << ": " << text;
  }
}

}  // namespace
}  // namespace leasefs::test

namespace leasefs::test {
namespace {

// xattrs the agent could never read (trusted.*, read by the daemon as root) are
// not shown to it by diff; an approver sees them.
TEST_F(JournalAttack, DiffShowsTheAgentNoXattrValueItCouldNotRead) {
  ASSERT_EQ(run_sh("cd " + root + " && echo x > f && chmod 644 f").exit_code, 0);
  mount();
  const uint64_t t = leased_turn();
  ASSERT_EQ(sh("setfattr -n trusted.secret -v hidden-value f").exit_code, 0);
  nlohmann::json d = agent_call("diff", {{"turn", t}});
  ASSERT_TRUE(d.value("ok", false)) << d.dump();
  const std::string text = d["result"].value("text", std::string());
  EXPECT_EQ(d.dump().find("hidden-value"), std::string::npos) << d.dump();
  EXPECT_EQ(d.dump().find("68696464656e2d76616c7565"), std::string::npos)
      << d.dump();  // nor in hex
  EXPECT_NE(text.find("value not shown"), std::string::npos) << text;
  EXPECT_NE(ok("diff", {{"turn", t}}).value("text", std::string()).find("hidden-value"),
            std::string::npos);
}

}  // namespace
}  // namespace leasefs::test

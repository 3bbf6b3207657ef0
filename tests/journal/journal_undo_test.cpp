// Every tool, through a real mount: a copy of the tree is taken before the turn,
// the tool runs under a lease, `diff` shows what it did, `undo` puts the tree
// back, and the tree is compared with the copy (type, mode, owner, content,
// symlink targets, hard links).
#include <gtest/gtest.h>

#include "memory/ledger.hpp"
#include "tests/support/journal_fixture.hpp"

namespace leasefs::test {
namespace {

class JournalUndo : public JournalTest {
 protected:
  // Takes the copy, runs `script` in a leased turn, checks the diff mentions
  // each of `expect`, undoes the turn and compares.
  void round_trip(const std::string& script, const std::vector<std::string>& expect) {
    const std::string before = copy_before();
    const uint64_t turn = leased_turn();
    RunResult r = sh(script);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string after = signature(root);
    ASSERT_NE(after, before) << "the turn changed nothing";
    nlohmann::json d = ok("diff", {{"turn", turn}});
    const std::string text = d.value("text", std::string());
    for (const auto& e : expect) EXPECT_NE(text.find(e), std::string::npos) << e << "\n" << text;
    ok("turn");  // the turn is over; the undo is journaled in the next one
    nlohmann::json u = ok("undo", {{"turn", turn}});
    EXPECT_TRUE(u.value("applied", false)) << u.dump();
    EXPECT_EQ(signature(root), before);
  }
};

TEST_F(JournalUndo, SedInPlace) {
  ASSERT_EQ(run_sh("printf 'one\\ntwo\\nthree\\n' > " + root + "/a.txt").exit_code, 0);
  mount();
  round_trip("sed -i 's/two/TWO/' a.txt", {"-two", "+TWO", "--- a/a.txt"});
}

// The journal reads a file's content before its first change in a turn, and
// diff reads it again; natively an append reads nothing, so neither read may
// move the file's access time (base/no_atime.hpp).
TEST_F(JournalUndo, PreImagesAndDiffLeaveAccessTimesAsTheyWere) {
  ASSERT_EQ(run_sh("cd " + root +
                   " && printf 'one\\n' > a.txt && python3 -c \"import os\n"
                   "os.utime('a.txt', ns=(1000000000, 2000000000))\"")
                .exit_code,
            0);
  mount();
  const uint64_t turn = leased_turn();
  ASSERT_EQ(sh("echo two >> a.txt").exit_code, 0);
  const std::string text = ok("diff", {{"turn", turn}}).value("text", std::string());
  EXPECT_NE(text.find("+two"), std::string::npos) << text;
  RunResult st = sh("python3 -c \"import os; print(os.stat('a.txt').st_atime_ns)\"");
  ASSERT_EQ(st.exit_code, 0) << st.output;
  EXPECT_EQ(st.output, "1000000000\n");
}

// A name is bytes, not text: an agent may pick any. Names, a symlink's target
// and an attribute's name that are not UTF-8 are written, renamed and changed
// as natively, and undo puts back exactly those bytes.
TEST_F(JournalUndo, NamesThatAreNotUtf8) {
  ASSERT_EQ(run_sh("cd " + root +
                   " && python3 -c \"\nimport os\n"
                   "open(b'old\\xff','wb').write(b'old')\n"
                   "open(b'x\\xfe','wb').write(b'keep')\n"
                   "os.setxattr(b'x\\xfe', b'user.a\\xfd', b'1')\n"
                   "os.symlink(b't\\xfc', b'l')\"")
                .exit_code,
            0);
  mount();
  round_trip(
      "python3 -c \"\nimport os\n"
      "open(b'old\\xff','ab').write(b'more')\n"
      "open(b'new\\xfe','wb').write(b'n')\n"
      "os.rename(b'old\\xff', b'moved\\xfd')\n"
      "os.setxattr(b'x\\xfe', b'user.a\\xfd', b'2')\n"
      "os.remove(b'l')\nos.symlink(b'u\\xfb', b'l')\"",
      {"renamed \"old\\377\" -> \"moved\\375\"", "created file \"new\\376\"",
       "xattr \"user.a\\375\" of \"x\\376\" 1 -> 2", "symlink l -> \"t\\374\" now -> \"u\\373\""});
}

TEST_F(JournalUndo, GitCommitRestoresDotGit) {
  ASSERT_EQ(run_sh("cd " + root +
                   " && git init -q . && echo v1 > f && git add f && "
                   "git -c user.email=t@t -c user.name=t commit -qm one")
                .exit_code,
            0);
  mount();
  round_trip(
      "echo v2 > f && echo n > g && git add -A && "
      "git -c user.email=t@t -c user.name=t commit -qm two",
      {"+v2", "created file g", ".git/refs/heads/"});
  RunResult log = sh("git log --oneline | wc -l && git status --porcelain");
  EXPECT_EQ(log.output, "1\n") << log.output;
}

TEST_F(JournalUndo, PythonWritesSeveralFiles) {
  ASSERT_EQ(run_sh("cd " + root + " && echo keep > k && echo old > m && echo gone > z").exit_code,
            0);
  mount();
  round_trip(
      "python3 -c \"\nimport os\nfor i in range(3):\n    open(f'n{i}.txt','w').write(str(i)*10)\n"
      "open('m','a').write('more')\nos.remove('z')\nos.makedirs('pkg/sub')\n"
      "open('pkg/sub/x.py','w').write('x=1')\"",
      {"created file n0.txt", "+more", "deleted file z", "created dir pkg"});
}

TEST_F(JournalUndo, RmRfOfADirectory) {
  ASSERT_EQ(run_sh("cd " + root +
                   " && mkdir -p d/e/f && echo 1 > d/a && echo 2 > d/e/b && echo 3 > d/e/f/c && "
                   "chmod 750 d/e && ln -s ../a d/e/l")
                .exit_code,
            0);
  mount();
  round_trip("rm -rf d", {"deleted dir d", "deleted file d/e/f/c", "deleted symlink d/e/l"});
}

TEST_F(JournalUndo, MvOfADirectory) {
  ASSERT_EQ(
      run_sh("cd " + root + " && mkdir -p src/x && echo 1 > src/a && echo 2 > src/x/b").exit_code,
      0);
  mount();
  round_trip("mv src lib && echo 3 > lib/new", {"renamed src -> lib", "created file lib/new"});
}

// renameat2(RENAME_EXCHANGE) of two directories: each one's whole subtree is
// kept under both names, so that the undo swaps them back.
TEST_F(JournalUndo, ExchangeOfTwoDirectories) {
  ASSERT_EQ(
      run_sh("cd " + root + " && mkdir -p a/x b/y && echo 1 > a/x/f && echo 2 > b/y/g").exit_code,
      0);
  mount();
  round_trip(
      "python3 -c \"import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
      "sys.exit(libc.renameat2(-100, b'a', -100, b'b', 2) and ctypes.get_errno())\"",
      {"deleted file a/x/f", "created file b/x/f", "created file a/y/g"});
}

// The same with a file: the directory's names arrive beneath the file's old name.
TEST_F(JournalUndo, ExchangeOfADirectoryAndAFile) {
  ASSERT_EQ(run_sh("cd " + root + " && mkdir -p a/x && echo 1 > a/x/f && echo 2 > b").exit_code, 0);
  mount();
  round_trip(
      "python3 -c \"import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
      "sys.exit(libc.renameat2(-100, b'a', -100, b'b', 2) and ctypes.get_errno())\"",
      {});
}

// A directory moved over an empty one: what arrives beneath the old empty name
// goes again with the undo.
TEST_F(JournalUndo, MvOfADirectoryOverAnEmptyOne) {
  ASSERT_EQ(run_sh("cd " + root + " && mkdir -p a/x b && echo 1 > a/x/f").exit_code, 0);
  mount();
  round_trip("mv -T a b", {"renamed a -> b"});
}

TEST_F(JournalUndo, Chmod) {
  ASSERT_EQ(
      run_sh("cd " + root + " && echo x > s && chmod 644 s && mkdir d && chmod 700 d").exit_code,
      0);
  mount();
  round_trip("chmod 755 s && chmod 755 d", {"mode s 0644 -> 0755", "mode d 0700 -> 0755"});
}

TEST_F(JournalUndo, Symlinks) {
  ASSERT_EQ(run_sh("cd " + root + " && echo t > t1 && echo u > t2 && ln -s t1 cur").exit_code, 0);
  mount();
  round_trip("ln -sfn t2 cur && ln -s t1 extra && rm t1",
             {"symlink cur -> t1 now -> t2", "created symlink extra -> t1", "deleted file t1"});
}

TEST_F(JournalUndo, HardLinks) {
  ASSERT_EQ(run_sh("cd " + root + " && echo shared > a && ln a b && echo solo > c").exit_code, 0);
  mount();
  // A new link, and one name of an existing pair removed: both come back as
  // they were (b a link of a again, c with one name).
  round_trip("ln c c2 && rm b", {"created file c2", "deleted file b"});
}

TEST_F(JournalUndo, FileTruncatedThroughAnFdOpenedBeforeTheTurn) {
  ASSERT_EQ(run_sh("printf 'original content\\n' > " + root + "/log").exit_code, 0);
  mount();
  leased_turn();
  // Opened (for writing) in this turn, used in the next one.
  const pid_t writer = ::fork();
  if (writer == 0) {
    const int fd = ::open((root + "/log").c_str(), O_RDWR);
    if (fd < 0) ::_exit(3);
    while (::access((base + "/go").c_str(), F_OK) != 0) ::usleep(10000);
    if (::ftruncate(fd, 0) != 0) ::_exit(4);
    const char text[] = "rewritten\n";
    if (::pwrite(fd, text, sizeof text - 1, 0) != sizeof text - 1) ::_exit(5);
    ::close(fd);
    ::_exit(0);
  }
  children.push_back(writer);
  const std::string before = copy_before();
  const uint64_t turn = leased_turn();
  ASSERT_EQ(run_sh("touch " + base + "/go").exit_code, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(writer, &status, 0), writer);
  children.clear();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(sh("cat log").output, "rewritten\n");
  const std::string text = ok("diff", {{"turn", turn}}).value("text", std::string());
  EXPECT_NE(text.find("-original content"), std::string::npos) << text;
  ok("turn");
  ok("undo", {{"turn", turn}});
  EXPECT_EQ(signature(root), before);
  EXPECT_EQ(sh("cat log").output, "original content\n");
}

TEST_F(JournalUndo, AnUndoCanBeUndone) {
  ASSERT_EQ(run_sh("echo v1 > " + root + "/f").exit_code, 0);
  mount();
  const uint64_t t1 = leased_turn();
  ASSERT_EQ(sh("echo v2 > f && echo new > g").exit_code, 0);
  const std::string changed = signature(root);
  const uint64_t t2 = ok("turn").value("turn", uint64_t{0});
  nlohmann::json u = ok("undo", {{"turn", t1}});
  EXPECT_EQ(u.value("journaled_in_turn", uint64_t{0}), t2);
  EXPECT_TRUE(u.value("can_be_undone", false)) << u.dump();
  EXPECT_EQ(sh("cat f; ls g 2>&1 >/dev/null | wc -l").output, "v1\n1\n");
  ok("turn");
  ok("undo", {{"turn", t2}});
  EXPECT_EQ(signature(root), changed);
}

// The current turn's pre-images already hold the state before it, so an undo of
// the current turn is not offered as undoable (nothing would put it back).
TEST_F(JournalUndo, UndoOfTheCurrentTurnSaysItCannotBeUndone) {
  ASSERT_EQ(run_sh("echo v1 > " + root + "/f").exit_code, 0);
  mount();
  const uint64_t t = leased_turn();
  ASSERT_EQ(sh("echo v2 > f").exit_code, 0);
  nlohmann::json u = ok("undo", {{"turn", t}});
  EXPECT_FALSE(u.value("can_be_undone", true)) << u.dump();
  EXPECT_EQ(sh("cat f").output, "v1\n");
}

TEST_F(JournalUndo, LaterTurnsConflictUnlessForced) {
  ASSERT_EQ(run_sh("cd " + root + " && echo 0 > a && echo 0 > b").exit_code, 0);
  mount();
  const uint64_t t1 = leased_turn();
  ASSERT_EQ(sh("echo 1 > a && echo 1 > b").exit_code, 0);
  leased_turn();
  ASSERT_EQ(sh("echo 2 > a").exit_code, 0);
  ok("turn");
  nlohmann::json r = call("undo", {{"turn", t1}});
  ASSERT_FALSE(r.value("ok", true)) << r.dump();
  EXPECT_EQ(r["error"].value("code", ""), "undo_conflict") << r.dump();
  EXPECT_NE(r["error"].value("message", "").find("a (changed again in turn"), std::string::npos)
      << r.dump();
  EXPECT_EQ(sh("cat a b").output, "2\n1\n");  // nothing was touched
  // Only b: no conflict.
  ok("undo", {{"turn", t1}, {"paths", {"b"}}});
  EXPECT_EQ(sh("cat a b").output, "2\n0\n");
  // A dry run says what it would do and does nothing.
  nlohmann::json dry = ok("undo", {{"turn", t1}, {"force", true}, {"dry_run", true}});
  EXPECT_FALSE(dry.value("applied", true));
  EXPECT_EQ(sh("cat a").output, "2\n");
  ok("undo", {{"turn", t1}, {"force", true}});
  EXPECT_EQ(sh("cat a b").output, "0\n0\n");
}

TEST_F(JournalUndo, IdempotencyKeyRunsTheUndoOnce) {
  ASSERT_EQ(run_sh("echo 0 > " + root + "/a").exit_code, 0);
  mount();
  const uint64_t t1 = leased_turn();
  ASSERT_EQ(sh("echo 1 > a").exit_code, 0);
  ok("turn");
  ControlClient c(sock);
  nlohmann::json req = {
      {"id", 1}, {"cmd", "undo"}, {"args", {{"turn", t1}}}, {"idempotency_key", "undo-once"}};
  c.send_line(req.dump());
  nlohmann::json first = nlohmann::json::parse(c.read_line(60000));
  ASSERT_TRUE(first.value("ok", false)) << first.dump();
  EXPECT_EQ(sh("cat a").output, "0\n");
  // The file changes again (as root, underneath: no lease now); a replay must not undo again.
  leased_turn();
  ASSERT_EQ(sh("echo 9 > a").exit_code, 0);
  req["id"] = 2;
  c.send_line(req.dump());
  nlohmann::json second = nlohmann::json::parse(c.read_line(60000));
  ASSERT_TRUE(second.value("ok", false)) << second.dump();
  EXPECT_EQ(second["result"], first["result"]);
  EXPECT_EQ(sh("cat a").output, "9\n");
  // The ledger has the undo, once, with what was put back.
  memory::Ledger ledger(root + "/.longrun/memory.db");
  int undos = 0;
  for (const auto& e : ledger.entries(100)) {
    if (e.kind != "undo") continue;
    ++undos;
    EXPECT_EQ(e.subject_id, "turn " + std::to_string(t1));
    EXPECT_EQ(e.actor_uid, 0u);
  }
  EXPECT_EQ(undos, 1);
}

TEST_F(JournalUndo, DiffStatAndPathFilter) {
  ASSERT_EQ(
      run_sh("cd " + root + " && mkdir src docs && echo a > src/a && echo d > docs/d").exit_code,
      0);
  mount();
  const uint64_t t = leased_turn();
  ASSERT_EQ(sh("echo A > src/a && echo D > docs/d").exit_code, 0);
  // Default: the current turn.
  nlohmann::json d = ok("diff", {{"stat", true}, {"paths", {"src"}}});
  EXPECT_EQ(d.value("turn", uint64_t{0}), t);
  const std::string text = d.value("text", std::string());
  EXPECT_NE(text.find("modified src/a"), std::string::npos) << text;
  EXPECT_EQ(text.find("docs"), std::string::npos) << text;
  EXPECT_EQ(text.find("+A"), std::string::npos) << text;
}

TEST_F(JournalUndo, OverTheCapIsNotUndoableAndSaidSo) {
  ASSERT_EQ(run_sh("head -c 2097152 /dev/zero > " + root + "/big && echo s > " + root + "/small")
                .exit_code,
            0);
  mount({"--journal-max-file-mb", "1"});
  const uint64_t t = leased_turn();
  // A rewrite: an append would keep only the length, whatever the cap.
  ASSERT_EQ(sh("echo x > big && echo t > small").exit_code, 0);
  nlohmann::json st = ok("status");
  ASSERT_TRUE(st.contains("journal")) << st.dump();
  EXPECT_EQ(st["journal"]["not_undoable"], nlohmann::json::array({"big"})) << st.dump();
  ok("turn");
  nlohmann::json u = ok("undo", {{"turn", t}});
  ASSERT_EQ(u["not_undoable"].size(), 1u) << u.dump();
  EXPECT_EQ(u["not_undoable"][0].value("path", ""), "big");
  EXPECT_EQ(sh("cat small").output, "s\n");
}

TEST_F(JournalUndo, JournalOffKeepsNothing) {
  ASSERT_EQ(run_sh("echo 0 > " + root + "/a").exit_code, 0);
  mount({"--journal=off"});
  leased_turn();
  ASSERT_EQ(sh("echo 1 > a").exit_code, 0);
  nlohmann::json r = call("diff");
  EXPECT_FALSE(r.value("ok", true)) << r.dump();
  struct stat st {};
  EXPECT_NE(::stat((root + "/.longrun/journal").c_str(), &st), 0);  // never created
}

// Status says what the journal holds as soon as a turn ends, before the next
// turn's first write: the last turn's copies count as older turns' bytes.
TEST_F(JournalUndo, TheLastTurnCountsAsOlderOnceTheNextBegins) {
  ASSERT_EQ(sh("printf 'a line of text\\n' > f").exit_code, 0);
  mount();
  const uint64_t turn = leased_turn();
  ASSERT_EQ(sh("printf 'rewritten\\n' > f").exit_code, 0);
  const uint64_t recorded = ok("status")["journal"].value("bytes", uint64_t{0});
  ASSERT_GT(recorded, 0u) << "the rewrite was not journaled";
  ok("turn");
  const nlohmann::json j = ok("status")["journal"];
  EXPECT_EQ(j.value("turn", uint64_t{0}), turn + 1) << j.dump();
  EXPECT_EQ(j.value("bytes", uint64_t{1}), 0u) << j.dump();
  EXPECT_GE(j.value("older_turns_bytes", uint64_t{0}), recorded) << j.dump();
}

}  // namespace
}  // namespace leasefs::test

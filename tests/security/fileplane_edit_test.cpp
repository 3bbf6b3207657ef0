// Edits the way tools make them (gate/temp_sibling.hpp): under a grant for one
// exact path, `sed -i`, `perl -i`, an editor's atomic save and `git checkout --`
// work on that path, run by the agent's uid through the mount, while the
// temporary file beside it can never become a lasting file outside the scope.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "base/clock.hpp"
#include "tests/security/fileplane_support.hpp"

namespace leasefs::test::fileplane {
namespace {

namespace stdfs = std::filesystem;

class RecordingSink : public report::Sink {
 public:
  void on_refusal(report::Refusal r) noexcept override {
    std::lock_guard lock(mu);
    refusals.push_back(std::move(r));
  }
  void on_write_closed(report::WriteClosed) noexcept override {}
  std::vector<report::Refusal> leftovers() {
    std::lock_guard lock(mu);
    std::vector<report::Refusal> out;
    for (const auto& r : refusals) {
      if (r.reason == gate::DenyReason::kTemporaryLeftover) out.push_back(r);
    }
    return out;
  }
  std::mutex mu;
  std::vector<report::Refusal> refusals;
};

class ToolEdit : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = in_backing(fs_,
                        "mkdir -p src docs; printf 'hello\\nworld\\n' > src/a.c; echo b > src/b.c; "
                        "echo d > docs/x.md; export HOME=/tmp; git init -q . && git add -A && "
                        "git -c user.name=t -c user.email=t@e commit -qm seed; "
                        "chown -R 65534:65534 .");
    ASSERT_TRUE(r.ok()) << r.output;
    fs_.reporter().set_sink(&sink_);
    fs_.publish(leased(1, {{{"src/a.c"}}}));
  }
  void TearDown() override {
    fs_.stop();
    fs_.reporter().set_sink(nullptr);
  }
  // Only src/a.c may differ from the seed; no other name may have appeared.
  void expect_only_target_changed() {
    std::vector<std::string> names;
    for (const auto& e : stdfs::directory_iterator(fs_.backing() + "/src")) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"a.c", "b.c"}));
    EXPECT_EQ(read_file(fs_.backing() + "/src/b.c"), "b\n");
    EXPECT_EQ(read_file(fs_.backing() + "/docs/x.md"), "d\n");
  }
  RunResult agent(const std::string& script) {
    return fs_.sh(
        "export HOME=/tmp GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory "
        "GIT_CONFIG_VALUE_0='*'; " +
            script,
        kAgent);
  }
  MountedFs fs_;
  RecordingSink sink_;
  int kept_fd_result_ = -1;
};

TEST_F(ToolEdit, SedInPlace) {
  auto r = agent("sed -i s/hello/bye/ src/a.c");
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/src/a.c"), "bye\nworld\n");
  expect_only_target_changed();
}

TEST_F(ToolEdit, PerlInPlace) {
  auto r = agent("perl -pi -e s/world/perl/ src/a.c");
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/src/a.c"), "hello\nperl\n");
  expect_only_target_changed();
}

TEST_F(ToolEdit, EditorAtomicSave) {
  // What editors do: write a temporary beside the file, fsync, rename over it.
  auto r = agent(
      "/usr/bin/python3 -c \"import os\n"
      "fd = os.open('src/.a.c.tmp', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)\n"
      "os.write(fd, b'saved\\n'); os.fsync(fd); os.fchmod(fd, 0o644); os.close(fd)\n"
      "os.rename('src/.a.c.tmp', 'src/a.c')\"");
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/src/a.c"), "saved\n");
  expect_only_target_changed();
}

TEST_F(ToolEdit, GitCheckoutFile) {
  ASSERT_TRUE(in_backing(fs_, "echo dirty > src/a.c").ok());
  auto r = agent("git checkout -- src/a.c && git status --porcelain");
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/src/a.c"), "hello\nworld\n");
  EXPECT_FALSE(stdfs::exists(fs_.backing() + "/.git/index.lock"));
  expect_only_target_changed();
}

// The temporary may go onto the granted path, nowhere else, and not by a link.
TEST_F(ToolEdit, SiblingCannotBecomeAnOutOfScopeFile) {
  const std::string before = tree_digest(fs_.backing());
  auto r = agent("echo tmp > src/tmp && mv src/tmp src/kept.c");
  EXPECT_FALSE(r.ok()) << r.output;
  r = agent("mv src/tmp docs/tmp");
  EXPECT_FALSE(r.ok()) << r.output;
  r = agent("ln src/tmp src/kept2.c");
  EXPECT_FALSE(r.ok()) << r.output;
  r = agent("mv src/tmp src/b.c");  // an existing out-of-scope file
  EXPECT_FALSE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/src/b.c"), "b\n");
  // Writing it and removing it are fine; then nothing is left.
  r = agent("echo more >> src/tmp && rm src/tmp");
  EXPECT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(tree_digest(fs_.backing()), before);
  // Not beside the granted path: not a temporary sibling.
  r = agent("echo x > docs/tmp");
  EXPECT_FALSE(r.ok()) << r.output;
  // .git/index.lock goes onto .git/index only.
  r = agent("echo x > .git/index.lock && mv .git/index.lock .git/HEAD");
  EXPECT_FALSE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/.git/HEAD").rfind("ref: ", 0), 0u);
}

// A temporary still there when the turn ends is taken out of the tree (deleted
// here: this mount has no journal) and reported; the name is free again.
TEST_F(ToolEdit, LeftoverIsTakenOutOfTheTreeAtTheEndOfTheTurn) {
  auto r = agent("echo tmp > src/left.tmp && ls src/left.tmp");
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_TRUE(sink_.leftovers().empty());
  fs_.publish(leased(2, {{{"src/a.c"}}}));  // the next turn
  auto left = sink_.leftovers();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].path, "src/left.tmp");
  EXPECT_FALSE(stdfs::exists(fs_.backing() + "/src/left.tmp"));
  r = agent("ls src/left.tmp");
  EXPECT_FALSE(r.ok()) << "the kernel still shows it: " << r.output;
  r = agent("mv src/left.tmp src/a.c");
  EXPECT_FALSE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/src/a.c"), "hello\nworld\n");
  expect_only_target_changed();
}

// A grant whose TTL passed is in force no more: the temporaries it let a tool
// make are leftovers at the next publication (the service publishes at every
// expiry), and a later grant of the turn does not bring them back.
TEST_F(ToolEdit, AnExpiredGrantEndsItsTemporarySiblings) {
  auto r = agent("echo tmp > src/left.tmp");
  ASSERT_TRUE(r.ok()) << r.output;
  gate::GateSnapshot expired = leased(1, {{{"src/a.c"}}});
  expired.grants[0].expires_ms = base::now_ms() - 1000;
  fs_.publish(expired);
  auto left = sink_.leftovers();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].path, "src/left.tmp");
  EXPECT_FALSE(stdfs::exists(fs_.backing() + "/src/left.tmp"));
  fs_.publish(leased(1, {{{"src/a.c"}}}));
  r = agent("mv src/left.tmp src/a.c");
  EXPECT_FALSE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/src/a.c"), "hello\nworld\n");
}

// A temporary sibling linked under a grant that came later, the link then
// removed, still has the name it was created with: it is still one, and the end
// of its lease takes it out of the tree.
TEST_F(ToolEdit, ASiblingStaysOneWhenALinkToItIsRemoved) {
  auto r = agent("echo tmp > src/left.tmp");
  ASSERT_TRUE(r.ok()) << r.output;
  fs_.publish(leased(1, {{{"src/a.c"}}, {{"src/left.tmp", "docs/l"}}}));
  r = agent("ln src/left.tmp docs/l && rm docs/l");
  ASSERT_TRUE(r.ok()) << r.output;
  fs_.publish(leased(2, {{{"src/a.c"}}}));  // the next turn
  EXPECT_FALSE(stdfs::exists(fs_.backing() + "/src/left.tmp"));
  auto left = sink_.leftovers();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].path, "src/left.tmp");
}

// `end-turn` keeps the turn's index: a temporary sibling of the ended lease must
// not come back to life under the next grant of the same turn (issue 33).
TEST_F(ToolEdit, EndTurnEndsTemporarySiblings) {
  ASSERT_TRUE(in_backing(fs_, "echo b-conf > src/b.conf && chown 65534:65534 src/b.conf").ok());
  // The agent creates its temporary and keeps the descriptor across the end of
  // the turn; it writes and re-modes through it once told to go on.
  const std::string tmp = fs_.mnt() + "/src/.a.c.tmp";
  int ready[2], go[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(go), 0);
  std::thread agent_thread([&] {
    kept_fd_result_ = as_agent([&] {
      int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
      char c = fd < 0 ? 'n' : 'y';
      if (::write(ready[1], &c, 1) != 1 || fd < 0 || ::read(go[0], &c, 1) != 1) return 99;
      const bool wrote = ::write(fd, "x", 1) == 1;
      const bool moded = ::fchmod(fd, 0755) == 0;
      return (wrote ? 1 : 0) | (moded ? 2 : 0);
    });
  });
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_EQ(c, 'y');
  fs_.publish(leased(1, {}));                  // end-turn: same turn, no grant
  fs_.publish(leased(1, {{{"src/b.conf"}}}));  // the approver grants another file
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  agent_thread.join();
  for (int fd : {ready[0], ready[1], go[0], go[1]}) ::close(fd);
  EXPECT_EQ(kept_fd_result_, 0) << "1: wrote through the kept descriptor, 2: re-moded through it";
  // By name: it is no longer there to be re-moded or moved onto src/b.conf.
  EXPECT_NE(as_agent([&] { return err_of(::chmod(tmp.c_str(), 0755)); }), 0);
  EXPECT_FALSE(agent("mv src/.a.c.tmp src/b.conf").ok());
  EXPECT_EQ(read_file(fs_.backing() + "/src/b.conf"), "b-conf\n");
  EXPECT_EQ(sink_.leftovers().size(), 1u);
}

// A file with two names stays writable through the name it keeps after its
// other name is replaced by a rename (sed -i), whichever name the daemon met first.
TEST_F(ToolEdit, AFileWithTwoNamesStaysWritableThroughTheNameItKeeps) {
  for (const std::string first : {"a", "b"}) {
    const std::string other = first == "a" ? "b" : "a";
    const std::string dir = "src/two-" + first;  // a fresh directory for each order
    ASSERT_TRUE(in_backing(fs_, "mkdir " + dir + " && echo one > " + dir + "/" + other + " && ln " +
                                    dir + "/" + other + " " + dir + "/" + first +
                                    " && chown -R 65534:65534 " + dir)
                    .ok());
    fs_.publish(leased(2, {{{"src/**"}}}));
    // The daemon meets `first`, then `other`; sed replaces `first`.
    auto r = agent("ls -i " + dir + "/" + first + " " + dir + "/" + other +
                   " && sed -i s/one/ONE/ " + dir + "/" + first);
    ASSERT_TRUE(r.ok()) << first << ": " << r.output;
    r = agent("echo three > " + dir + "/" + other + " && chmod 600 " + dir + "/" + other);
    EXPECT_TRUE(r.ok()) << first << " met first: " << r.output;
    EXPECT_EQ(read_file(fs_.backing() + "/" + dir + "/" + other), "three\n") << first;
    EXPECT_EQ(read_file(fs_.backing() + "/" + dir + "/" + first), "ONE\n") << first;
    fs_.publish(leased(1, {{{"src/a.c"}}}));
  }
}

// The same when the two names are in two directories and the name removed is the
// one the daemon met first: the file is still reached through the name it keeps.
TEST_F(ToolEdit, AFileStaysWritableThroughTheNameItKeepsInAnotherDirectory) {
  ASSERT_TRUE(in_backing(fs_,
                         "mkdir -p two/a two/b && echo d > two/b/g && ln two/b/g two/a/x && "
                         "chown -R 65534:65534 two")
                  .ok());
  auto r = agent("cat two/a/x two/b/g");
  ASSERT_TRUE(r.ok()) << r.output;
  fs_.publish(leased(2, {{}}));
  r = agent("rm two/a/x");
  ASSERT_TRUE(r.ok()) << r.output;
  fs_.publish(leased(2, {{{"two/b/g"}, gate::kClassWrite}}));
  r = agent("echo more >> two/b/g");
  EXPECT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/two/b/g"), "d\nmore\n");
  // And the name it lost is not where it is: a grant for it alone writes nothing.
  fs_.publish(leased(2, {{{"two/a/x"}, gate::kClassWrite}}));
  r = agent("exec 3>>two/b/g");
  EXPECT_FALSE(r.ok()) << r.output;
}

// A write-only grant over a directory: a temporary may replace a file there
// (sed -i), but never become a new one by a rename: that would be a create the
// grant does not give, and a file that outlives the turn. Where a grant lets
// that name be created, it may.
TEST_F(ToolEdit, AWriteOnlyGrantRenamesATemporaryOntoNoNewName) {
  fs_.publish(leased(2, {{{"src/**"}, gate::kClassWrite}}));
  auto r = agent("echo new > src/.new.tmp && mv src/.new.tmp src/new.c");
  EXPECT_FALSE(r.ok()) << r.output;
  EXPECT_FALSE(stdfs::exists(fs_.backing() + "/src/new.c"));
  r = agent("sed -i s/hello/bye/ src/a.c");
  EXPECT_TRUE(r.ok()) << r.output;
  // A second grant lets src/new2.c be created: the temporary may become it.
  fs_.publish(leased(2, {{{"src/**"}, gate::kClassWrite}, {{"src/new2.c"}, gate::kClassCreate}}));
  r = agent("echo new > src/.new2.tmp && mv src/.new2.tmp src/new2.c");
  EXPECT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/src/new2.c"), "new\n");
}

// A one-file grant lets a tool make a temporary file beside the file, but that
// file is for the edit: it cannot be run while it is one, whatever its mode. An
// executable script edited in place keeps its mode and runs as before.
TEST_F(ToolEdit, ATemporarySiblingCannotBeRun) {
  ASSERT_TRUE(
      in_backing(fs_, "printf '#!/bin/sh\\necho hello\\n' > src/a.c && chmod 0755 src/a.c").ok());
  auto r = agent("printf '#!/bin/sh\\necho ran\\n' > src/.tool.tmp && chmod +x src/.tool.tmp");
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_NE(
      stdfs::status(fs_.backing() + "/src/.tool.tmp").permissions() & stdfs::perms::owner_exec,
      stdfs::perms::none);
  r = agent("./src/.tool.tmp");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.output.find("ran"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Permission denied"), std::string::npos) << r.output;
  bool reported = false;
  {
    std::lock_guard lock(sink_.mu);
    for (const auto& refusal : sink_.refusals) {
      reported = reported || (refusal.op == gate::Op::kExec && refusal.path == "src/.tool.tmp");
    }
  }
  EXPECT_TRUE(reported);
  r = agent("rm src/.tool.tmp && sed -i s/hello/bye/ src/a.c && ./src/a.c");
  EXPECT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(r.output, "bye\n");
  EXPECT_EQ(stdfs::status(fs_.backing() + "/src/a.c").permissions() & stdfs::perms::all,
            static_cast<stdfs::perms>(0755));
}

// `dir/` means `dir/**` (DESIGN.md, Path globs), temporary siblings included.
TEST_F(ToolEdit, ADirectoryGrantOpensTemporarySiblings) {
  for (const std::string glob : {"src/**", "src/"}) {
    fs_.publish(leased(2, {{{glob}, gate::kClassWrite}}));
    auto r = agent("sed -i s/hello/bye/ src/a.c");
    EXPECT_TRUE(r.ok()) << glob << ": " << r.output;
    EXPECT_EQ(read_file(fs_.backing() + "/src/a.c"), "bye\nworld\n") << glob;
    ASSERT_TRUE(in_backing(fs_, "printf 'hello\\nworld\\n' > src/a.c").ok());
    expect_only_target_changed();
  }
}

}  // namespace
}  // namespace leasefs::test::fileplane

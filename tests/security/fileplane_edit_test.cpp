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

#include "tests/security/fileplane_support.hpp"

namespace leasefs::test::fileplane {
namespace {

namespace stdfs = std::filesystem;

class RecordingSink : public gate::GateEventSink {
 public:
  void on_refusal(gate::Refusal r) noexcept override {
    std::lock_guard lock(mu);
    refusals.push_back(std::move(r));
  }
  void on_write_closed(gate::WriteClosed) noexcept override {}
  std::vector<gate::Refusal> leftovers() {
    std::lock_guard lock(mu);
    std::vector<gate::Refusal> out;
    for (const auto& r : refusals) {
      if (r.reason == gate::DenyReason::kTemporaryLeftover) out.push_back(r);
    }
    return out;
  }
  std::mutex mu;
  std::vector<gate::Refusal> refusals;
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
    fs_.gate().set_sink(&sink_);
    fs_.publish(leased(1, {{{"src/a.c"}}}));
  }
  void TearDown() override {
    fs_.stop();
    fs_.gate().set_sink(nullptr);
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

// A temporary still there when the turn ends is reported, and from then on it is
// an ordinary out-of-scope file.
TEST_F(ToolEdit, LeftoverIsReportedAtTheEndOfTheTurn) {
  auto r = agent("echo tmp > src/left.tmp");
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_TRUE(sink_.leftovers().empty());
  fs_.publish(leased(2, {{{"src/a.c"}}}));  // the next turn
  auto left = sink_.leftovers();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].path, "src/left.tmp");
  r = agent("echo more >> src/left.tmp");
  EXPECT_FALSE(r.ok()) << r.output;
  r = agent("mv src/left.tmp src/a.c");
  EXPECT_FALSE(r.ok()) << r.output;
  EXPECT_EQ(read_file(fs_.backing() + "/src/left.tmp"), "tmp\n");
}

}  // namespace
}  // namespace leasefs::test::fileplane

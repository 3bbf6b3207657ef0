// Every gated operation, driven by the real tool an agent would use: refused
// without a lease (EACCES, "Permission denied", nothing changed underneath) and
// done with one. Each case runs as root and as an unprivileged user.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/support/mounted_fs.hpp"

namespace leasefs::test {
namespace {

constexpr uid_t kNobody = 65534;

struct OpCase {
  const char* name;
  const char* command;  // run inside the mount
  const char* check;    // run inside the mount after success; must exit 0
};

// Every case starts from: existing.txt ("hello"), emptydir/, tagged (user.k=v).
const OpCase kCases[] = {
    {"EchoCreate", "echo hi > new.txt", "grep -qx hi new.txt"},
    {"EchoTruncate", "echo hi > existing.txt", "grep -qx hi existing.txt"},
    {"Append", "echo more >> existing.txt", "test $(wc -l < existing.txt) = 2"},
    {"Cp", "cp existing.txt copy.txt", "cmp existing.txt copy.txt"},
    {"Mv", "mv existing.txt moved.txt", "test -f moved.txt && ! test -e existing.txt"},
    {"Rm", "rm existing.txt", "! test -e existing.txt"},
    {"Mkdir", "mkdir newdir", "test -d newdir"},
    {"Rmdir", "rmdir emptydir", "! test -e emptydir"},
    {"Ln", "ln existing.txt hard", "test $(stat -c %h existing.txt) = 2"},
    {"LnS", "ln -s existing.txt soft", "test $(readlink soft) = existing.txt"},
    {"TouchNew", "touch touched", "test -f touched"},
    {"TouchExisting", "touch -d 2001-01-01 existing.txt",
     "test $(stat -c %Y existing.txt) = $(date -d 2001-01-01 +%s)"},
    {"Chmod", "chmod 600 existing.txt", "test $(stat -c %a existing.txt) = 600"},
    {"Chown", "chown 65534:65534 existing.txt", "test $(stat -c %u existing.txt) = 65534"},
    {"Truncate", "truncate -s 2 existing.txt", "test $(stat -c %s existing.txt) = 2"},
    {"SedInPlace", "sed -i s/hello/bye/ existing.txt", "grep -qx bye existing.txt"},
    {"Mkfifo", "mkfifo fifo", "test -p fifo"},
    {"PythonOpenW", "python3 -c \"open('existing.txt','w').write('py')\"",
     "test $(cat existing.txt) = py"},
    {"PythonRename", "python3 -c \"import os; os.rename('existing.txt','renamed')\"",
     "test -f renamed"},
    {"PythonSetxattr", "python3 -c \"import os; os.setxattr('existing.txt','user.a',b'1')\"",
     "python3 -c \"import os; assert os.getxattr('existing.txt','user.a')==b'1'\""},
    {"PythonRemovexattr", "python3 -c \"import os; os.removexattr('tagged','user.k')\"",
     "python3 -c \"import os; assert os.listxattr('tagged')==[]\""},
    {"Fallocate", "fallocate -l 65536 existing.txt", "test $(stat -c %s existing.txt) = 65536"},
    {"GitInitAddCommit",
     "export HOME=/tmp; git init -q repo && cd repo && echo x > f && git add f && "
     "git -c user.name=t -c user.email=t@e commit -qm m",
     "cd repo && test $(git log --oneline | wc -l) = 1"},
};

struct Param {
  const OpCase* op;
  bool as_nobody;
};

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return std::string(info.param.op->name) + (info.param.as_nobody ? "_AsNobody" : "_AsRoot");
}

std::vector<Param> all_params() {
  std::vector<Param> out;
  for (const auto& c : kCases) {
    out.push_back({&c, false});
    out.push_back({&c, true});
  }
  return out;
}

bool denied(const RunResult& r) {
  return r.exit_code != 0 && (r.output.find("Permission denied") != std::string::npos ||
                              r.output.find("permission denied") != std::string::npos);
}

class GatedOp : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    RunOptions o;
    o.cwd = fs.backing();
    auto r = run_sh(
        "set -e; echo hello > existing.txt; mkdir emptydir; touch tagged; "
        "python3 -c \"import os; os.setxattr('tagged','user.k',b'v')\"",
        o);
    ASSERT_TRUE(r.ok()) << r.output;
    if (GetParam().as_nobody) {
      // The unprivileged user owns the tree, so only the gate can refuse.
      ASSERT_TRUE(run_sh("chown -R 65534:65534 . && chmod 1777 .", o).ok());
    }
  }
  std::optional<uid_t> who() const {
    return GetParam().as_nobody ? std::optional<uid_t>(kNobody) : std::nullopt;
  }
  MountedFs fs;
};

TEST_P(GatedOp, RefusedWithoutLeaseThenDoneWithOne) {
  const OpCase& op = *GetParam().op;
  const std::string before = tree_digest(fs.backing());

  auto refused = fs.sh(op.command, who());
  EXPECT_TRUE(denied(refused)) << "exit " << refused.exit_code << ": " << refused.output;
  EXPECT_EQ(tree_digest(fs.backing()), before) << "the tree changed under a refusal";

  // Revoked (task in progress, no grant for this turn) refuses the same way.
  fs.revoke();
  refused = fs.sh(op.command, who());
  EXPECT_TRUE(denied(refused)) << "exit " << refused.exit_code << ": " << refused.output;
  EXPECT_EQ(tree_digest(fs.backing()), before) << "the tree changed under a refusal";

  fs.grant();
  auto done = fs.sh(op.command, who());
  ASSERT_EQ(done.exit_code, 0) << done.output;
  auto check = fs.sh(op.check, who());
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

INSTANTIATE_TEST_SUITE_P(AllTools, GatedOp, ::testing::ValuesIn(all_params()), param_name);

// The control plane hears about refusals with the path relative to the root and
// the caller's pid, and about files closed after a leased write.
class RecordingSink : public report::Sink {
 public:
  void on_refusal(report::Refusal r) noexcept override {
    std::lock_guard lock(mu);
    refusals.push_back(std::move(r));
  }
  void on_write_closed(report::WriteClosed c) noexcept override {
    std::lock_guard lock(mu);
    closed.push_back(std::move(c));
  }
  std::mutex mu;
  std::vector<report::Refusal> refusals;
  std::vector<report::WriteClosed> closed;
};

TEST(GateReports, RefusalCarriesRelativePathOpAndReason) {
  MountedFs fs;
  RecordingSink sink;
  fs.reporter().set_sink(&sink);
  ::mkdir((fs.backing() + "/src").c_str(), 0755);
  auto r = fs.sh("echo x > src/a.c");
  EXPECT_TRUE(denied(r)) << r.output;
  fs.reporter().set_sink(nullptr);
  std::lock_guard lock(sink.mu);
  ASSERT_FALSE(sink.refusals.empty());
  EXPECT_EQ(sink.refusals[0].path, "src/a.c");
  EXPECT_EQ(sink.refusals[0].op, gate::Op::kCreate);
  EXPECT_EQ(sink.refusals[0].reason, gate::DenyReason::kNoTask);
  EXPECT_GT(sink.refusals[0].caller.pid, 0);
}

TEST(GateReports, WriteClosedAfterLeasedWrite) {
  MountedFs fs;
  RecordingSink sink;
  fs.reporter().set_sink(&sink);
  fs.grant();
  ::mkdir((fs.backing() + "/src").c_str(), 0755);
  auto r = fs.sh("printf 12345 > src/b.c");
  ASSERT_TRUE(r.ok()) << r.output;
  // The kernel sends RELEASE after close(2) has returned: wait for it.
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(sink.mu);
      if (!sink.closed.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  fs.stop();
  fs.reporter().set_sink(nullptr);
  std::lock_guard lock(sink.mu);
  ASSERT_EQ(sink.closed.size(), 1u);
  EXPECT_EQ(sink.closed[0].path, "src/b.c");
  EXPECT_EQ(sink.closed[0].bytes_written, 5u);
  EXPECT_EQ(sink.closed[0].grant_id, "G_1");
  EXPECT_TRUE(static_cast<bool>(sink.closed[0].content));
}

// What the audit hashes at release is what was written, read through the
// descriptor the release hands over: the handle's own for a file the create made
// (opened readable underneath whatever the caller asked), a read-only reopen for a
// file that existed. The caller is still held to its own access mode and to the
// file's mode bits.
TEST(GateReports, WrittenContentIsReadForTheHashWhateverTheAccessMode) {
  MountedFs fs;
  RecordingSink sink;
  fs.reporter().set_sink(&sink);
  fs.grant();
  ASSERT_EQ(::mkdir((fs.backing() + "/src").c_str(), 0777), 0);
  ASSERT_EQ(::chmod((fs.backing() + "/src").c_str(), 0777), 0);
  ASSERT_EQ(::close(::open((fs.backing() + "/src/old").c_str(), O_CREAT | O_WRONLY, 0666)), 0);
  ASSERT_EQ(::chown((fs.backing() + "/src/old").c_str(), kNobody, kNobody), 0);
  // Write-only opens, as a shell's > and python's "wb" make them; the new file's
  // mode lets its owner write and not read.
  auto r = fs.sh(
      "set -e; umask 0; python3 -c \"\n"
      "import errno, os\n"
      "fd = os.open('src/new', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o200)\n"
      "os.write(fd, b'secret')\n"
      "try:\n"
      "    os.read(fd, 1); print('read a write-only descriptor')\n"
      "except OSError as e:\n"
      "    assert e.errno == errno.EBADF, e\n"
      "os.close(fd)\n"
      "try:\n"
      "    open('src/new', 'rb'); print('read a file of mode 0200')\n"
      "except PermissionError:\n"
      "    pass\n"
      "\"; printf abc > src/old",
      kNobody);
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(r.output, "");
  struct stat st {};
  ASSERT_EQ(::stat((fs.backing() + "/src/new").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0200u);
  EXPECT_EQ(st.st_uid, kNobody);
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(sink.mu);
      if (sink.closed.size() >= 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  fs.stop();
  fs.reporter().set_sink(nullptr);
  std::lock_guard lock(sink.mu);
  ASSERT_EQ(sink.closed.size(), 2u);
  std::map<std::string, std::string> content;
  for (const auto& c : sink.closed) {
    ASSERT_TRUE(static_cast<bool>(c.content)) << c.path;
    char buf[64] = {};
    const ssize_t n = ::pread(c.content.get(), buf, sizeof buf, 0);
    ASSERT_GE(n, 0) << c.path << ": " << std::strerror(errno);
    content[c.path] = std::string(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(content["src/new"], "secret");
  EXPECT_EQ(content["src/old"], "abc");
}

TEST(GateReports, PathNarrowedGrantSeesRealPaths) {
  MountedFs fs;
  fs.publish(leased_snapshot(3, {"src/**"}));
  ::mkdir((fs.backing() + "/src").c_str(), 0755);
  ::mkdir((fs.backing() + "/docs").c_str(), 0755);
  auto r = fs.sh("echo ok > src/in.c && mkdir -p src/deep/er && echo ok > src/deep/er/x");
  EXPECT_TRUE(r.ok()) << r.output;
  r = fs.sh("echo no > docs/out.md");
  EXPECT_TRUE(denied(r)) << r.output;
  r = fs.sh("mv src/in.c docs/in.c");  // the destination is out of scope
  EXPECT_TRUE(denied(r)) << r.output;
  EXPECT_EQ(::access((fs.backing() + "/src/in.c").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace leasefs::test

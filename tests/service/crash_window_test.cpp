// Crash windows of a checkpoint (I7): a child process runs a real checkpoint with a
// failpoint armed and dies there; the test then reopens the root as a restarted
// daemon would and checks what survived.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "base/error.hpp"
#include "base/failpoint.hpp"
#include "memory/sqlite_memory_store.hpp"
#include "service/service.hpp"
#include "tests/support/actors.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::gate {
namespace {

using test::TempDir;

using testing::kPerson;

struct Daemon {
  explicit Daemon(const TempDir& root)
      : dir(root.fd(), root.path()),
        store(dir),
        memory(dir.path("memory.db")),
        ledger(dir.path("memory.db")),
        service(store, memory, &ledger, gate, events) {}
  state::LongrunDir dir;
  state::StateStore store;
  memory::SqliteMemoryStore memory;
  memory::Ledger ledger;
  Gate gate;
  report::EventBus events;
  service::Service service;
};

service::CheckpointArgs args() {
  service::CheckpointArgs a;
  a.summary = "halfway through the parser rewrite";
  a.next = "port the tokenizer tests";
  return a;
}

// Runs a checkpoint in a child with `point` armed; returns the child's exit code.
int checkpoint_in_child(const TempDir& root, const char* point) {
  pid_t child = ::fork();
  if (child == 0) {
    ::setenv("LEASEFS_FAILPOINT", point, 1);
    try {
      Daemon d(root);
      d.service.checkpoint(args(), kPerson);
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class CrashWindow : public ::testing::TestWithParam<const char*> {};

TEST_P(CrashWindow, I7_CrashLeavesLastGoodStateAndOneCheckpointAfterRetry) {
  TempDir root;
  std::string task;
  {
    Daemon d(root);
    d.service.start({"rewrite the parser", {}, "all parser tests pass"}, kPerson);
    d.service.grant({"go ahead", {}, kAllOps, std::nullopt}, kPerson);
    task = d.service.state().task_id;
  }
  ASSERT_EQ(checkpoint_in_child(root, GetParam()), base::kFailpointExitCode);

  // The last good state: still in progress, no checkpoint recorded, and readable.
  Daemon d(root);
  auto s = d.service.state();
  EXPECT_EQ(s.task_id, task);
  EXPECT_EQ(s.status, TaskStatus::kInProgress);
  EXPECT_TRUE(s.last_checkpoint_id.empty());
  EXPECT_TRUE(s.grants.empty());
  EXPECT_FALSE(d.gate.check(Op::kWrite, "a", {}).allowed);
  EXPECT_TRUE(std::filesystem::exists(root.longrun("pending_checkpoint.json")));

  service::CheckpointArgs retry;
  retry.retry_pending = true;
  auto reply = d.service.checkpoint(retry, kPerson);
  EXPECT_EQ(reply.checkpoint_id, "C_0001");
  EXPECT_EQ(d.memory.count(), 1u);  // the record written before the crash is not duplicated
  auto rec = d.memory.find_by_ref("C_0001");
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->content, reply.text);
  EXPECT_EQ(d.service.state().status, TaskStatus::kPaused);
  EXPECT_FALSE(std::filesystem::exists(root.longrun("pending_checkpoint.json")));
}

INSTANTIATE_TEST_SUITE_P(Points, CrashWindow,
                         ::testing::Values("checkpoint.after_memory", "state_log.torn_write"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (c == '.') c = '_';
                           }
                           return n;
                         });

// A crash while state.log is folded into state.json (at a clean stop here; the
// same code runs when the log grows past its size): the checkpoint was answered,
// so the restart has it, from the log, and nothing is pending.
TEST(CrashWindowCompaction, I7_CrashWhileFoldingTheLogKeepsTheAnsweredState) {
  TempDir root;
  {
    Daemon d(root);
    d.service.start({"rewrite the parser", {}, "all parser tests pass"}, kPerson);
  }
  ASSERT_EQ(checkpoint_in_child(root, "state.after_tmp"), base::kFailpointExitCode);
  EXPECT_GT(std::filesystem::file_size(root.longrun("state.log")), 0u);

  Daemon d(root);
  EXPECT_EQ(d.service.state().status, TaskStatus::kPaused);
  EXPECT_EQ(d.service.state().last_checkpoint_id, "C_0001");
  EXPECT_FALSE(std::filesystem::exists(root.longrun("pending_checkpoint.json")));
  EXPECT_EQ(d.memory.count(), 1u);
  // Loading folded the log in: state.json alone now holds the state.
  EXPECT_EQ(std::filesystem::file_size(root.longrun("state.log")), 0u);
  EXPECT_NE(TempDir::read(root.longrun("state.json")).find("C_0001"), std::string::npos);
}

TEST(CrashWindowMemory, I2_RealMemoryFailureLeavesNoRecordAndRetryWritesOne) {
  TempDir root;
  {
    Daemon d(root);
    d.service.start({"rewrite the parser", {}, ""}, kPerson);
  }
  ASSERT_EQ(checkpoint_in_child(root, "memory.save"), 1);  // an error, not a crash
  Daemon d(root);
  EXPECT_EQ(d.memory.count(), 0u);
  EXPECT_TRUE(std::filesystem::exists(root.longrun("pending_checkpoint.json")));
  auto reply = d.service.resume(std::nullopt, kPerson);  // resume replays the pending one
  EXPECT_EQ(d.memory.count(), 1u);
  ASSERT_TRUE(reply.checkpoint.has_value());
  EXPECT_EQ(reply.checkpoint->id, "C_0001");
}

// Every ledger-and-state change commits in one order: the ledger records a grant
// before the state makes it a lease. A daemon killed between the two writes
// comes back with no lease, the ledger's record, and a next grant that never
// reuses the recorded id (for `grant` and for `approve` alike).
class LedgerThenState : public ::testing::TestWithParam<bool> {};

TEST_P(LedgerThenState, I7_KilledBetweenLedgerAndStateNoLeaseAndNoReusedGrantId) {
  const bool via_approve = GetParam();
  TempDir root;
  std::string request_id;
  {
    Daemon d(root);
    d.service.start({"rewrite the parser", {}, ""}, kPerson);
    if (via_approve) {
      request_id = d.service.request({"edit the lexer", {"src/**"}}, kPerson).request.id;
    }
  }
  pid_t child = ::fork();
  if (child == 0) {
    ::setenv("LEASEFS_FAILPOINT", "grant.after_ledger", 1);
    try {
      Daemon d(root);
      if (via_approve) {
        d.service.approve(request_id, "yes", kPerson);
      } else {
        d.service.grant({"go ahead", {}, kAllOps, std::nullopt}, kPerson);
      }
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), base::kFailpointExitCode);

  Daemon d(root);
  EXPECT_TRUE(d.service.state().grants.empty());
  EXPECT_FALSE(d.gate.check(Op::kWrite, "src/a.c", {}).allowed);
  auto next = d.service.grant({"again", {}, kAllOps, std::nullopt}, kPerson);
  EXPECT_EQ(next.grant.id, "G_0002");
  std::vector<std::string> ids;
  for (const auto& e : d.ledger.entries(100)) {
    if (e.kind == "grant") ids.push_back(e.subject_id);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"G_0001", "G_0002"}));
}

INSTANTIATE_TEST_SUITE_P(Commands, LedgerThenState, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "approve" : "grant"; });

}  // namespace
}  // namespace leasefs::gate

#include "service/service.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.hpp"
#include "fake_memory.hpp"
#include "service/checkpoint_text.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::gate {
namespace {

using test::TempDir;
using testing::FakeMemory;

const Actor kPerson{.pid = 1, .uid = 0, .gid = 0, .approver = true};
const Actor kAgent{.pid = 2, .uid = 1000, .gid = 1000, .approver = false};

class ServiceTest : public ::testing::Test {
 protected:
  ServiceTest()
      : dir_(root_.fd(), root_.path()),
        store_(dir_),
        ledger_(dir_.path("memory.db")),
        service_(std::make_unique<Service>(store_, memory_, &ledger_, gate_, events_)) {}

  bool can_write(const std::string& path = "src/a.c") {
    return gate_.check(Op::kWrite, path, {}).allowed;
  }
  DenyReason why_not(const std::string& path = "src/a.c") {
    return gate_.check(Op::kWrite, path, {}).reason;
  }
  void start_and_grant() {
    service_->start({"fix the payment timeout", {}, "tests pass"}, kAgent);
    service_->grant({"change the timeout in pay.c", {}, kAllOps, std::nullopt}, kPerson);
    ASSERT_TRUE(can_write());
  }
  CheckpointArgs checkpoint_args() {
    CheckpointArgs a;
    a.summary = "raised the timeout to 30s";
    a.next = "run the payment tests";
    a.verified = "unit tests pass";
    return a;
  }
  std::string state_file() { return TempDir::read(root_.longrun("state.json")); }
  void restart() {
    service_.reset();
    service_ = std::make_unique<Service>(store_, memory_, &ledger_, gate_, events_);
  }
  void expect_error(const std::function<void()>& fn, const std::string& code) {
    try {
      fn();
      ADD_FAILURE() << "expected " << code;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
    }
  }

  TempDir root_;
  LongrunDir dir_;
  StateStore store_;
  FakeMemory memory_;
  memory::Ledger ledger_;
  Gate gate_;
  EventBus events_;
  std::unique_ptr<Service> service_;
};

// ---- I1: search before start ----

TEST_F(ServiceTest, I1_StartSearchesMemoryBeforeCreatingTheTask) {
  memory_.records.push_back(
      {"S_0001", "note", "payment timeouts", "the gateway needs 30s", {"payment"}, "T_0", "", 0});
  memory_.calls.clear();
  auto reply = service_->start({"fix the payment timeout", {}, ""}, kAgent);
  ASSERT_FALSE(memory_.calls.empty());
  EXPECT_EQ(memory_.calls.front(), "search");
  ASSERT_EQ(reply["memories"].size(), 1u);
  EXPECT_EQ(reply["memories"][0]["id"], "S_0001");
  EXPECT_EQ(reply["task"]["status"], "in_progress");
  EXPECT_EQ(reply["access_mode"], "read_only");
  EXPECT_FALSE(can_write());
  EXPECT_EQ(why_not(), DenyReason::kNoLease);
}

TEST_F(ServiceTest, I1_StartFailsWithoutATaskWhenTheSearchFails) {
  memory_.fail_searches = true;
  EXPECT_THROW(service_->start({"fix the payment timeout", {}, ""}, kAgent), std::exception);
  EXPECT_FALSE(service_->state().has_task());
  EXPECT_FALSE(std::filesystem::exists(root_.longrun("state.json")));
}

// ---- I2: memory before output ----

TEST_F(ServiceTest, I2_CheckpointIsInMemoryBeforeStateAndBeforeItIsReturned) {
  start_and_grant();
  bool checked = false;
  memory_.on_save = [&] {
    // At the memory write, state.json does not know the checkpoint yet and the
    // intent is on disk.
    EXPECT_EQ(state_file().find("C_0001"), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(root_.longrun("pending_checkpoint.json")));
    checked = true;
  };
  auto reply = service_->checkpoint(checkpoint_args(), kAgent);
  EXPECT_TRUE(checked);
  EXPECT_EQ(reply["checkpoint_id"], "C_0001");
  ASSERT_EQ(memory_.records.size(), 1u);
  EXPECT_EQ(memory_.records[0].content, reply["text"]);
  EXPECT_NE(state_file().find("C_0001"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(root_.longrun("pending_checkpoint.json")));
  auto marker = parse_checkpoint_marker(reply["text"].get<std::string>());
  ASSERT_TRUE(marker.has_value());
  EXPECT_EQ((*marker)["access_mode"], "read_only");
  EXPECT_EQ((*marker)["status"], "paused");
  EXPECT_EQ((*marker)["checkpoint_id"], "C_0001");
  EXPECT_EQ((*marker)["next_step"], "run the payment tests");
  const std::string text = reply["text"];
  for (const char* part :
       {"Goal:", "Done when:", "Next step:", "## Verified", "## Discarded", "## Needs approval"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part;
  }
  EXPECT_FALSE(can_write());
}

TEST_F(ServiceTest, I2_MemoryFailureReturnsNoTextRevokesAndKeepsAPendingCheckpoint) {
  start_and_grant();
  const std::string before = state_file();
  memory_.fail_saves = true;
  try {
    service_->checkpoint(checkpoint_args(), kAgent);
    ADD_FAILURE() << "a checkpoint was returned although memory failed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "checkpoint_write_failed");
    EXPECT_EQ(std::string(e.what()).find("Goal:"), std::string::npos);  // no checkpoint text
  }
  EXPECT_FALSE(can_write());  // the live lease is revoked
  EXPECT_TRUE(memory_.records.empty());
  EXPECT_TRUE(std::filesystem::exists(root_.longrun("pending_checkpoint.json")));
  EXPECT_EQ(service_->state().status, TaskStatus::kInProgress);
  EXPECT_EQ(state_file().find("C_0001"), std::string::npos);
  (void)before;

  // Memory is back: the retry saves the same checkpoint id, once.
  memory_.fail_saves = false;
  CheckpointArgs retry;
  retry.retry_pending = true;
  auto reply = service_->checkpoint(retry, kAgent);
  EXPECT_EQ(reply["checkpoint_id"], "C_0001");
  EXPECT_EQ(memory_.records.size(), 1u);
  EXPECT_EQ(service_->state().status, TaskStatus::kPaused);
  EXPECT_FALSE(std::filesystem::exists(root_.longrun("pending_checkpoint.json")));
  expect_error([&] { service_->checkpoint(retry, kAgent); }, "no_pending_checkpoint");
  EXPECT_EQ(memory_.records.size(), 1u);
}

TEST_F(ServiceTest, I2_ResumeReplaysAPendingCheckpointOnce) {
  start_and_grant();
  memory_.fail_saves = true;
  EXPECT_THROW(service_->checkpoint(checkpoint_args(), kAgent), Error);
  memory_.fail_saves = false;
  restart();
  auto reply = service_->resume(std::nullopt, kAgent);
  EXPECT_EQ(memory_.records.size(), 1u);
  EXPECT_EQ(reply["checkpoint"]["id"], "C_0001");
  EXPECT_EQ(reply["task"]["status"], "in_progress");
}

// ---- I3: single-turn lease ----

TEST_F(ServiceTest, I3_TurnRevokesTheLease) {
  start_and_grant();
  service_->turn(kAgent);
  EXPECT_FALSE(can_write());
  EXPECT_EQ(why_not(), DenyReason::kNoLease);
}

TEST_F(ServiceTest, I3_EndTurnRevokesTheLease) {
  start_and_grant();
  service_->end_turn(kAgent);
  EXPECT_FALSE(can_write());
}

TEST_F(ServiceTest, I3_CheckpointRevokesTheLease) {
  start_and_grant();
  service_->checkpoint(checkpoint_args(), kAgent);
  EXPECT_FALSE(can_write());
  EXPECT_EQ(why_not(), DenyReason::kNotInProgress);
}

TEST_F(ServiceTest, I3_ResumeStartsReadOnlyInTheNextTurn) {
  start_and_grant();
  const uint64_t turn = service_->state().turn_index;
  service_->checkpoint(checkpoint_args(), kAgent);
  auto reply = service_->resume(std::nullopt, kAgent);
  EXPECT_EQ(reply["turn"], turn + 1);
  EXPECT_EQ(reply["access_mode"], "read_only");
  EXPECT_EQ(reply["checkpoint"]["id"], "C_0001");
  EXPECT_NE(reply["checkpoint"]["text"].get<std::string>().find("raised the timeout"),
            std::string::npos);
  EXPECT_FALSE(can_write());
  EXPECT_EQ(why_not(), DenyReason::kNoLease);
}

TEST_F(ServiceTest, I3_TransitionOutOfInProgressRevokes) {
  start_and_grant();
  service_->transition(TaskStatus::kBlocked, "waiting for the API key", kAgent);
  EXPECT_FALSE(can_write());
  service_->transition(TaskStatus::kInProgress, "key arrived", kAgent);
  EXPECT_FALSE(can_write());  // coming back does not bring the lease back
}

TEST_F(ServiceTest, I3_RestartRevokes) {
  start_and_grant();
  restart();
  EXPECT_FALSE(can_write());
  EXPECT_EQ(service_->state().task_id.empty(), false);
  EXPECT_TRUE(service_->state().grants.empty());
}

TEST_F(ServiceTest, I3_GrantNeedsAnApproverAndATaskInProgress) {
  expect_error([&] { service_->grant({"go", {}, kAllOps, std::nullopt}, kPerson); }, "no_task");
  service_->start({"fix it", {}, ""}, kAgent);
  expect_error([&] { service_->grant({"go", {}, kAllOps, std::nullopt}, kAgent); }, "forbidden");
  expect_error(
      [&] {
        service_->grant({"", {}, kAllOps, std::nullopt}, kPerson);
      },
      "invalid_argument");
  service_->transition(TaskStatus::kPaused, "", kAgent);
  expect_error(
      [&] {
        service_->grant({"go", {}, kAllOps, std::nullopt}, kPerson);
      },
      "not_in_progress");
  EXPECT_FALSE(can_write());
}

TEST_F(ServiceTest, GrantScopedByPathAndTtl) {
  service_->start({"fix it", {}, ""}, kAgent);
  service_->grant({"docs only", {root_.path() + "/docs/**"}, kClassWrite, 60'000}, kPerson);
  EXPECT_TRUE(can_write("docs/a.md"));
  EXPECT_EQ(why_not("src/a.c"), DenyReason::kOutOfScope);
  auto g = service_->state().grants.at(0);
  EXPECT_EQ(g.paths, std::vector<std::string>{"docs/**"});
  ASSERT_TRUE(g.expires_ms.has_value());
  expect_error(
      [&] {
        service_->grant({"x", {"/etc/**"}, kAllOps, std::nullopt}, kPerson);
      },
      "invalid_argument");
}

TEST_F(ServiceTest, RevokeOneGrantOrAll) {
  start_and_grant();
  service_->grant({"second", {"docs/**"}, kAllOps, std::nullopt}, kPerson);
  expect_error([&] { service_->revoke(std::string("G_0099"), kAgent); }, "not_found");
  service_->revoke(std::string("G_0001"), kAgent);
  EXPECT_FALSE(can_write("src/a.c"));
  EXPECT_TRUE(can_write("docs/a.md"));
  service_->revoke(std::nullopt, kAgent);
  EXPECT_FALSE(can_write("docs/a.md"));
}

TEST_F(ServiceTest, CompletingATaskNeedsAnApprover) {
  service_->start({"fix it", {}, ""}, kAgent);
  expect_error([&] { service_->transition(TaskStatus::kCompleted, "", kAgent); }, "forbidden");
  service_->transition(TaskStatus::kWaitingVerification, "done", kAgent);
  service_->transition(TaskStatus::kCompleted, "checked", kPerson);
  expect_error([&] { service_->transition(TaskStatus::kInProgress, "", kPerson); },
               "invalid_transition");
  // A finished task makes room for the next.
  EXPECT_NO_THROW(service_->start({"next thing", {}, ""}, kAgent));
}

TEST_F(ServiceTest, StartRefusedWhileATaskIsOpen) {
  service_->start({"fix it", {}, ""}, kAgent);
  expect_error([&] { service_->start({"another", {}, ""}, kAgent); }, "task_exists");
}

TEST_F(ServiceTest, TurnIndexOnlyGrows) {
  service_->start({"fix it", {}, ""}, kAgent);
  uint64_t last = service_->state().turn_index;
  for (int i = 0; i < 3; ++i) {
    service_->turn(kAgent);
    service_->end_turn(kAgent);
    EXPECT_GT(service_->state().turn_index, last);
    last = service_->state().turn_index;
  }
  restart();
  EXPECT_EQ(service_->state().turn_index, last);
}

TEST_F(ServiceTest, RequestApproveBecomesALeaseForThisTurnOnly) {
  service_->start({"fix it", {}, ""}, kAgent);
  auto req = service_->request({"edit the parser", {"src/parse.c"}}, kAgent);
  const std::string id = req["request"]["id"];
  expect_error([&] { service_->approve(id, "", kAgent); }, "forbidden");
  auto approved = service_->approve(id, "yes, just the parser", kPerson);
  EXPECT_EQ(approved["grant"]["request_id"], id);
  EXPECT_TRUE(can_write("src/parse.c"));
  EXPECT_FALSE(can_write("src/other.c"));
  expect_error([&] { service_->approve(id, "", kPerson); }, "already_decided");
  service_->turn(kAgent);
  EXPECT_FALSE(can_write("src/parse.c"));
}

TEST_F(ServiceTest, StatusReportIsWrittenAndTellsHowToAsk) {
  service_->start({"fix it", {}, ""}, kAgent);
  const std::string md = TempDir::read(root_.longrun("status.md"));
  EXPECT_NE(md.find("leasectl request --reason"), std::string::npos);
  EXPECT_NE(md.find("in_progress"), std::string::npos);
  service_->grant({"change the timeout", {}, kAllOps, std::nullopt}, kPerson);
  EXPECT_NE(TempDir::read(root_.longrun("status.md")).find("change the timeout"),
            std::string::npos);
}

TEST_F(ServiceTest, RecoverRebuildsTheTaskFromTheNewestCheckpoint) {
  start_and_grant();
  const std::string task = service_->state().task_id;
  service_->checkpoint(checkpoint_args(), kAgent);
  service_.reset();
  std::filesystem::remove(root_.longrun("state.json"));
  service_ = std::make_unique<Service>(store_, memory_, &ledger_, gate_, events_);
  auto s = service_->state();
  EXPECT_EQ(s.task_id, task);
  EXPECT_EQ(s.status, TaskStatus::kPaused);
  EXPECT_EQ(s.last_checkpoint_id, "C_0001");
  EXPECT_EQ(s.next_step, "run the payment tests");
  EXPECT_FALSE(can_write());
  // The next checkpoint does not reuse the id.
  service_->resume(std::nullopt, kAgent);
  auto reply = service_->checkpoint(checkpoint_args(), kAgent);
  EXPECT_EQ(reply["checkpoint_id"], "C_0002");
}

TEST_F(ServiceTest, I2_ANewCheckpointIsRefusedWhileOneIsPending) {
  start_and_grant();
  memory_.fail_saves = true;
  EXPECT_THROW(service_->checkpoint(checkpoint_args(), kAgent), Error);
  memory_.fail_saves = false;
  // The task is still in progress; a second checkpoint must not take C_0001's place.
  auto second = checkpoint_args();
  second.summary = "a different summary";
  expect_error([&] { service_->checkpoint(second, kAgent); }, "pending_checkpoint");
  EXPECT_TRUE(memory_.records.empty());
  CheckpointArgs retry;
  retry.retry_pending = true;
  auto reply = service_->checkpoint(retry, kAgent);
  EXPECT_NE(reply["text"].get<std::string>().find("raised the timeout"), std::string::npos);
  EXPECT_EQ(memory_.records.at(0).content, reply["text"]);
}

TEST_F(ServiceTest, I2_APendingCheckpointReplaysEvenIfTheTaskMovedOn) {
  start_and_grant();
  memory_.fail_saves = true;
  EXPECT_THROW(service_->checkpoint(checkpoint_args(), kAgent), Error);
  memory_.fail_saves = false;
  service_->transition(TaskStatus::kWaitingVerification, "handing over", kAgent);
  CheckpointArgs retry;
  retry.retry_pending = true;
  EXPECT_NO_THROW(service_->checkpoint(retry, kAgent));
  EXPECT_EQ(service_->state().status, TaskStatus::kWaitingVerification);
  EXPECT_EQ(service_->state().last_checkpoint_id, "C_0001");
  EXPECT_FALSE(std::filesystem::exists(root_.longrun("pending_checkpoint.json")));
}

TEST_F(ServiceTest, I7_ACorruptPendingCheckpointIsStateCorrupt) {
  start_and_grant();
  TempDir::write(root_.longrun("pending_checkpoint.json"), "{}");
  expect_error([&] { service_->resume(std::nullopt, kAgent); }, "state_corrupt");
  EXPECT_EQ(TempDir::read(root_.longrun("pending_checkpoint.json")), "{}");
}

TEST_F(ServiceTest, ResumeOfAnotherTaskSwitchesOnlyWhenItSucceeds) {
  service_->start({"task A", {}, ""}, kAgent);
  const std::string a = service_->state().task_id;
  service_->checkpoint(checkpoint_args(), kAgent);
  service_->transition(TaskStatus::kFailed, "abandoned", kAgent);
  service_->start({"task B", {}, ""}, kAgent);
  const std::string b = service_->state().task_id;
  service_->checkpoint(checkpoint_args(), kAgent);

  expect_error([&] { service_->resume(std::string("T_unknown"), kAgent); }, "not_found");
  EXPECT_EQ(service_->state().task_id, b);
  // A finished task is not brought back by its old checkpoint.
  expect_error([&] { service_->resume(a, kAgent); }, "invalid_transition");
  EXPECT_EQ(service_->state().task_id, b);
  EXPECT_NE(state_file().find(b), std::string::npos);
  auto reply = service_->resume(b, kAgent);
  EXPECT_EQ(reply["task"]["task_id"], b);
}

TEST_F(ServiceTest, ARequestOfAFinishedTaskCannotBecomeAGrantForTheNext) {
  service_->start({"task A", {}, ""}, kAgent);
  const std::string id = service_->request({"edit A", {"a.txt"}}, kAgent)["request"]["id"];
  service_->transition(TaskStatus::kFailed, "abandoned", kAgent);
  service_->start({"task B", {}, ""}, kAgent);
  expect_error([&] { service_->approve(id, "", kPerson); }, "stale_request");
  EXPECT_FALSE(can_write("a.txt"));
}

TEST_F(ServiceTest, ExpiredGrantsAreNotReportedAsInForce) {
  service_->start({"fix it", {}, ""}, kAgent);
  service_->grant({"brief", {}, kAllOps, 1}, kPerson);
  ::usleep(20'000);
  auto status = service_->status();
  EXPECT_EQ(status["access_mode"], "read_only");
  EXPECT_TRUE(status["grants"].empty());
  expect_error(
      [&] {
        service_->grant({"forever", {}, kAllOps, INT64_MAX / 2}, kPerson);
      },
      "invalid_argument");
}

}  // namespace
}  // namespace leasefs::gate

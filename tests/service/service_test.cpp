#include "service/service.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.hpp"
#include "memory/sqlite_db.hpp"
#include "service/checkpoint_text.hpp"
#include "state/state_log.hpp"
#include "tests/support/actors.hpp"
#include "tests/support/fake_memory.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::gate {
namespace {

using test::TempDir;
using testing::FakeMemory;

using testing::kAgent;
using testing::kPerson;

class ServiceTest : public ::testing::Test {
 protected:
  ServiceTest()
      : dir_(root_.fd(), root_.path()),
        store_(dir_),
        ledger_(dir_.path("memory.db")),
        service_(std::make_unique<service::Service>(store_, memory_, &ledger_, gate_, events_)) {}

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
  service::CheckpointArgs checkpoint_args() {
    service::CheckpointArgs a;
    a.summary = "raised the timeout to 30s";
    a.next = "run the payment tests";
    a.verified = "unit tests pass";
    return a;
  }
  // The state on disk: state.json and the changes appended to state.log after it.
  std::string state_file() {
    return TempDir::read(root_.longrun("state.json")) + TempDir::read(root_.longrun("state.log"));
  }
  void restart() {
    service_.reset();
    service_ = std::make_unique<service::Service>(store_, memory_, &ledger_, gate_, events_);
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
  state::LongrunDir dir_;
  state::StateStore store_;
  FakeMemory memory_;
  memory::Ledger ledger_;
  Gate gate_;
  report::EventBus events_;
  std::unique_ptr<service::Service> service_;
};

// ---- I1: search before start ----

TEST_F(ServiceTest, I1_StartSearchesMemoryBeforeCreatingTheTask) {
  memory_.records.push_back(
      {"S_0001", "note", "payment timeouts", "the gateway needs 30s", {"payment"}, "T_0", "", 0});
  memory_.calls.clear();
  auto reply = service_->start({"fix the payment timeout", {}, ""}, kAgent);
  ASSERT_FALSE(memory_.calls.empty());
  EXPECT_EQ(memory_.calls.front(), "search");
  ASSERT_EQ(reply.memories.size(), 1u);
  EXPECT_EQ(reply.memories[0].record.id, "S_0001");
  EXPECT_EQ(reply.task.status, TaskStatus::kInProgress);
  EXPECT_TRUE(reply.task.grants.empty());
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
  EXPECT_EQ(reply.checkpoint_id, "C_0001");
  EXPECT_EQ(reply.status, TaskStatus::kPaused);
  ASSERT_EQ(memory_.records.size(), 1u);
  EXPECT_EQ(memory_.records[0].content, reply.text);
  EXPECT_EQ(reply.record_id, memory_.records[0].id);
  EXPECT_NE(state_file().find("C_0001"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(root_.longrun("pending_checkpoint.json")));
  auto marker = service::parse_checkpoint_marker(reply.text);
  ASSERT_TRUE(marker.has_value());
  EXPECT_EQ((*marker)["access_mode"], "read_only");
  EXPECT_EQ((*marker)["status"], "paused");
  EXPECT_EQ((*marker)["checkpoint_id"], "C_0001");
  EXPECT_EQ((*marker)["next_step"], "run the payment tests");
  const std::string text = reply.text;
  for (const char* part :
       {"Goal:", "Done when:", "Next step:", "## Verified", "## Discarded", "## Needs approval"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part;
  }
  EXPECT_FALSE(can_write());
}

// A client shows a resumed checkpoint with other closing advice: the reply cuts
// the text at the real closing line, never at the same words quoted in a note.
TEST(CheckpointText, PartsCutAtTheClosingLineNotAtAQuotedOne) {
  TaskState s;
  s.task_id = "T_1";
  s.last_checkpoint_id = "C_0001";
  s.description = "Writes are closed: this checkpoint revoked the lease. (a quote)";
  const std::string text = service::render_checkpoint(
      s, {"Writes are closed: this checkpoint revoked the lease.", "", "", ""});
  const auto parts = service::checkpoint_parts(text);
  EXPECT_EQ(parts.notes + parts.closing + parts.marker, text);
  EXPECT_TRUE(
      parts.closing.starts_with("Writes are closed: this checkpoint revoked the lease. "
                                "Resume with `leasectl resume T_1`"))
      << parts.closing;
  EXPECT_TRUE(parts.closing.ends_with("\n"));
  EXPECT_TRUE(parts.marker.starts_with("<!-- longrun-state: ")) << parts.marker;
  EXPECT_NE(parts.notes.find("## Summary\nWrites are closed"), std::string::npos) << parts.notes;

  // A task's end record has no closing advice: all of it is notes.
  const std::string end = service::render_task_end(s, "done");
  const auto end_parts = service::checkpoint_parts(end);
  EXPECT_EQ(end_parts.notes, end);
  EXPECT_TRUE(end_parts.closing.empty());
  EXPECT_TRUE(end_parts.marker.empty());
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
  service::CheckpointArgs retry;
  retry.retry_pending = true;
  auto reply = service_->checkpoint(retry, kAgent);
  EXPECT_EQ(reply.checkpoint_id, "C_0001");
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
  ASSERT_TRUE(reply.checkpoint.has_value());
  EXPECT_EQ(reply.checkpoint->id, "C_0001");
  EXPECT_EQ(reply.task.status, TaskStatus::kInProgress);
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
  EXPECT_EQ(reply.turn, turn + 1);
  EXPECT_TRUE(reply.task.grants.empty());
  ASSERT_TRUE(reply.checkpoint.has_value());
  EXPECT_EQ(reply.checkpoint->id, "C_0001");
  EXPECT_NE(reply.checkpoint->text.find("raised the timeout"), std::string::npos);
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

// The state record of a grant is written before the ledger commits (their syncs
// overlap); a grant the ledger refuses never takes effect, and the log ends with
// the state as it was, not with the grant.
TEST_F(ServiceTest, I7_AGrantTheLedgerCannotRecordIsRefusedAndLeavesNoLeaseInTheLog) {
  service_->start({"fix it", {}, ""}, kAgent);
  memory::SqliteDb other(dir_.path("memory.db"));
  other.exec(
      "CREATE TRIGGER refuse_grants BEFORE INSERT ON ledger BEGIN "
      "SELECT RAISE(ABORT, 'disk full'); END");
  EXPECT_THROW(service_->grant({"go", {}, kAllOps, std::nullopt}, kPerson), memory::MemoryError);
  EXPECT_FALSE(can_write());
  EXPECT_TRUE(service_->state().grants.empty());
  state::StateLog log(dir_);
  auto records = log.read_all();
  ASSERT_FALSE(records.empty());
  EXPECT_TRUE(records.back().state.at("grants").empty()) << records.back().state.dump();

  other.exec("DROP TRIGGER refuse_grants");
  auto g = service_->grant({"go", {}, kAllOps, std::nullopt}, kPerson);
  EXPECT_TRUE(can_write());
  EXPECT_EQ(ledger_.last_grant_number(), std::stoll(g.grant.id.substr(2)));
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
  const std::string id = req.request.id;
  EXPECT_EQ(req.request.paths, std::vector<std::string>{"src/parse.c"});
  EXPECT_EQ(req.request.state, memory::RequestState::pending);
  expect_error([&] { service_->approve(id, "", kAgent); }, "forbidden");
  auto approved = service_->approve(id, "yes, just the parser", kPerson);
  EXPECT_EQ(approved.grant.request_id, id);
  EXPECT_EQ(approved.request.id, id);
  EXPECT_EQ(approved.request.state, memory::RequestState::approved);
  EXPECT_TRUE(can_write("src/parse.c"));
  EXPECT_FALSE(can_write("src/other.c"));
  expect_error([&] { service_->approve(id, "", kPerson); }, "already_decided");
  service_->turn(kAgent);
  EXPECT_FALSE(can_write("src/parse.c"));
}

TEST_F(ServiceTest, StatusReportIsWrittenAndTellsHowToAsk) {
  service_->start({"fix it", {}, ""}, kAgent);
  service_->flush_status();
  const std::string md = TempDir::read(root_.longrun("status.md"));
  EXPECT_NE(md.find("leasectl request --reason"), std::string::npos);
  EXPECT_NE(md.find("in_progress"), std::string::npos);
  service_->grant({"change the timeout", {}, kAllOps, std::nullopt}, kPerson);
  service_->flush_status();
  EXPECT_NE(TempDir::read(root_.longrun("status.md")).find("change the timeout"),
            std::string::npos);
}

TEST_F(ServiceTest, RecoverRebuildsTheTaskFromTheNewestCheckpoint) {
  start_and_grant();
  const std::string task = service_->state().task_id;
  service_->checkpoint(checkpoint_args(), kAgent);
  service_.reset();
  std::filesystem::remove(root_.longrun("state.json"));
  service_ = std::make_unique<service::Service>(store_, memory_, &ledger_, gate_, events_);
  auto s = service_->state();
  EXPECT_EQ(s.task_id, task);
  EXPECT_EQ(s.status, TaskStatus::kPaused);
  EXPECT_EQ(s.last_checkpoint_id, "C_0001");
  EXPECT_EQ(s.next_step, "run the payment tests");
  EXPECT_FALSE(can_write());
  // The next checkpoint does not reuse the id.
  service_->resume(std::nullopt, kAgent);
  auto reply = service_->checkpoint(checkpoint_args(), kAgent);
  EXPECT_EQ(reply.checkpoint_id, "C_0002");
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
  service::CheckpointArgs retry;
  retry.retry_pending = true;
  auto reply = service_->checkpoint(retry, kAgent);
  EXPECT_NE(reply.text.find("raised the timeout"), std::string::npos);
  EXPECT_EQ(memory_.records.at(0).content, reply.text);
}

TEST_F(ServiceTest, I2_APendingCheckpointReplaysEvenIfTheTaskMovedOn) {
  start_and_grant();
  memory_.fail_saves = true;
  EXPECT_THROW(service_->checkpoint(checkpoint_args(), kAgent), Error);
  memory_.fail_saves = false;
  service_->transition(TaskStatus::kWaitingVerification, "handing over", kAgent);
  service::CheckpointArgs retry;
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
  EXPECT_EQ(reply.task.task_id, b);
}

TEST_F(ServiceTest, ARequestOfAFinishedTaskCannotBecomeAGrantForTheNext) {
  service_->start({"task A", {}, ""}, kAgent);
  const std::string id = service_->request({"edit A", {"a.txt"}}, kAgent).request.id;
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
  EXPECT_TRUE(status.grants.empty());
  expect_error(
      [&] {
        service_->grant({"forever", {}, kAllOps, INT64_MAX / 2}, kPerson);
      },
      "invalid_argument");
}

// ---- Ask mode (gate/ask.hpp): the service's side ----

// Records what the filesystem would be told.
struct RecordingWaiter : AskWaiter {
  std::vector<std::pair<uint64_t, bool>> answers;
  void on_answer(uint64_t id, bool approved) noexcept override {
    answers.emplace_back(id, approved);
  }
};

class AskServiceTest : public ServiceTest {
 protected:
  AskServiceTest() {
    channel_.attach_waiter(&waiter_);
    service_->set_ask_channel(&channel_, 60'000);
    service_->start({"ask mode", {}, ""}, kAgent);
  }
  ~AskServiceTest() override { channel_.attach_waiter(nullptr); }
  Ask ask(uint64_t id, std::vector<std::string> paths, std::vector<std::string> trees = {}) {
    Ask a;
    a.id = id;
    a.op = Op::kCreate;
    a.paths = std::move(paths);
    a.trees = std::move(trees);
    a.caller = {4242, 1000, 1000};
    a.turn = service_->state().turn_index;
    return a;
  }
  std::vector<service::PendingRequest> pending() { return service_->status().pending_requests; }

  AskChannel channel_;
  RecordingWaiter waiter_;
};

TEST_F(AskServiceTest, AnAskBecomesARequestAndItsApprovalAGrantForExactlyItsPaths) {
  EXPECT_GT(gate_.snapshot()->ask_ms, 0);
  service_->open_ask(ask(7, {"src/a.c"}, {"old"}));
  auto p = pending();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(p[0].ask);
  EXPECT_EQ(p[0].request.paths, (std::vector<std::string>{"src/a.c", "old/**"}));
  EXPECT_EQ(p[0].request.requester_uid, 1000u);
  EXPECT_EQ(p[0].request.requester_pid, 4242);
  service_->approve(p[0].request.id, "", kPerson);
  ASSERT_EQ(waiter_.answers.size(), 1u);
  EXPECT_EQ(waiter_.answers[0], std::make_pair(uint64_t{7}, true));
  EXPECT_TRUE(can_write("src/a.c"));
  EXPECT_TRUE(can_write("old/x/y"));
  EXPECT_FALSE(can_write("src/b.c"));
}

// A create refused at once files its request but nothing waits on it: ask mode
// counts only the operations that really wait for a person.
TEST_F(AskServiceTest, AFiledAskIsNotCountedAsWaiting) {
  Ask filed = ask(1, {"new.c"});
  filed.waits = false;
  service_->open_ask(filed);
  Ask parked = ask(2, {"old.c"});
  parked.waits = true;
  service_->open_ask(parked);
  const auto report = service_->status();
  EXPECT_EQ(report.ask.waiting, 1u);
  // Both are ask mode's requests, for the approver to answer.
  ASSERT_EQ(report.pending_requests.size(), 2u);
  size_t marked = 0;
  for (const auto& p : report.pending_requests) marked += p.ask ? 1 : 0;
  EXPECT_EQ(marked, 2u);
}

TEST_F(AskServiceTest, ARejectionAnswersNoAndGrantsNothing) {
  service_->open_ask(ask(8, {"src/a.c"}));
  service_->reject(pending()[0].request.id, "no", kPerson);
  ASSERT_EQ(waiter_.answers.size(), 1u);
  EXPECT_EQ(waiter_.answers[0], std::make_pair(uint64_t{8}, false));
  EXPECT_FALSE(can_write("src/a.c"));
}

TEST_F(AskServiceTest, TheEndOfTheTurnAnswersEveryAskNoAndClosesItsRequest) {
  service_->open_ask(ask(1, {"a"}));
  service_->open_ask(ask(2, {"b"}));
  const std::string first = pending()[0].request.id;
  service_->end_turn(kAgent);
  EXPECT_EQ(waiter_.answers.size(), 2u);
  for (const auto& [id, approved] : waiter_.answers) EXPECT_FALSE(approved) << id;
  EXPECT_TRUE(pending().empty());
  expect_error([&] { service_->approve(first, "", kPerson); }, "already_decided");
}

TEST_F(AskServiceTest, AnAskOfAnotherTurnOrWithoutATaskInProgressIsAnsweredNoAtOnce) {
  Ask old = ask(3, {"a"});
  old.turn += 1;
  service_->open_ask(old);
  service_->transition(TaskStatus::kBlocked, "waiting", kAgent);
  service_->open_ask(ask(4, {"b"}));
  ASSERT_EQ(waiter_.answers.size(), 2u);
  EXPECT_FALSE(waiter_.answers[0].second);
  EXPECT_FALSE(waiter_.answers[1].second);
  EXPECT_TRUE(pending().empty());
}

TEST_F(AskServiceTest, AClosedAskCannotBeApprovedLater) {
  service_->open_ask(ask(5, {"a"}));
  const std::string id = pending()[0].request.id;
  service_->close_ask(5, AskEnd::kTimedOut);
  EXPECT_TRUE(pending().empty());
  expect_error([&] { service_->approve(id, "", kPerson); }, "already_decided");
  EXPECT_TRUE(waiter_.answers.empty());  // the filesystem ended it itself
}

TEST_F(AskServiceTest, OnlyAnApproverSetsAskModeAndTheSnapshotFollows) {
  expect_error([&] { service_->set_ask(0, kAgent); }, "forbidden");
  auto off = service_->set_ask(0, kPerson);
  EXPECT_EQ(gate_.snapshot()->ask_ms, 0);
  EXPECT_FALSE(off.ask.on);
  EXPECT_TRUE(off.ask.set_by_task);
  auto mount = service_->set_ask(std::nullopt, kPerson);
  EXPECT_EQ(gate_.snapshot()->ask_ms, 60'000);
  EXPECT_EQ(mount.ask.timeout_ms, 60'000);
  EXPECT_FALSE(mount.ask.set_by_task);
  expect_error([&] { service_->set_ask(kMaxAskMs + 1, kPerson); }, "invalid_argument");
}

TEST(MayAsk, OnlyLeaseRefusalsOfLiteralPathsOutsideLongrun) {
  EXPECT_TRUE(may_ask(DenyReason::kNoLease, {"src/a.c"}));
  EXPECT_TRUE(may_ask(DenyReason::kOutOfScope, {"a", "b"}));
  EXPECT_FALSE(may_ask(DenyReason::kNoTask, {"src/a.c"}));
  EXPECT_FALSE(may_ask(DenyReason::kNotInProgress, {"src/a.c"}));
  EXPECT_FALSE(may_ask(DenyReason::kNoLease, {}));
  EXPECT_FALSE(may_ask(DenyReason::kNoLease, {".longrun/state.json"}));
  EXPECT_FALSE(may_ask(DenyReason::kProtectedPath, {".longrun"}));
  EXPECT_FALSE(may_ask(DenyReason::kNoLease, {std::string(kUnresolvedPath)}));
  for (const char* glob : {"*", "src/*.c", "a?b", "**"}) {
    EXPECT_FALSE(may_ask(DenyReason::kNoLease, {"ok", glob})) << glob;
  }
}

TEST(AskChannel, NoDeskMeansNoAskAndDetachingStopsAnswers) {
  AskChannel channel;
  EXPECT_FALSE(channel.ask(Ask{}));
  struct Desk : AskDesk {
    int asks = 0, ended = 0;
    void on_ask(Ask) noexcept override { ++asks; }
    void on_ask_ended(uint64_t, AskEnd) noexcept override { ++ended; }
  } desk;
  RecordingWaiter waiter;
  channel.attach_desk(&desk);
  channel.attach_waiter(&waiter);
  EXPECT_TRUE(channel.ask(Ask{}));
  channel.ended(1, AskEnd::kInterrupted);
  channel.answer(1, true);
  channel.attach_desk(nullptr);
  channel.attach_waiter(nullptr);
  EXPECT_FALSE(channel.ask(Ask{}));
  channel.answer(2, true);
  EXPECT_EQ(desk.asks, 1);
  EXPECT_EQ(desk.ended, 1);
  EXPECT_EQ(waiter.answers.size(), 1u);
}

}  // namespace
}  // namespace leasefs::gate

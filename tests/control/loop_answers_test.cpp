// What the control socket's loop answers itself (Dispatcher::try_on_loop):
// status, turn and end-turn, from memory, when nothing they need is held.
// Whatever would wait is handed to a worker having changed nothing; every
// other command, a keyed request and a long line always are.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "control/commands.hpp"
#include "gate/gate.hpp"
#include "memory/ledger.hpp"
#include "report/event_bus.hpp"
#include "service/service.hpp"
#include "state/longrun_dir.hpp"
#include "state/state_store.hpp"
#include "tests/support/fake_memory.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::control {
namespace {

using nlohmann::json;

class LoopAnswers : public ::testing::Test {
 protected:
  void SetUp() override {
    root_fd_.reset(::open(tmp_.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    dir_ = std::make_unique<state::LongrunDir>(root_fd_.get(), tmp_.path());
    store_ = std::make_unique<state::StateStore>(*dir_);
    ledger_ = std::make_unique<memory::Ledger>(dir_->path("memory.db"));
    service_ = std::make_unique<service::Service>(*store_, memory_, ledger_.get(), gate_, bus_);
    CommandContext ctx;
    ctx.service = service_.get();
    dispatcher_ = std::make_unique<Dispatcher>(ctx, nullptr);
  }

  static std::string line(const std::string& cmd, json args = json::object()) {
    return json{{"id", 7}, {"cmd", cmd}, {"args", std::move(args)}}.dump();
  }
  // On the loop: the reply, or null when it was handed over.
  json on_loop(const std::string& text, const gate::Actor& actor) {
    auto outcome = dispatcher_->try_on_loop(text, actor);
    return outcome ? outcome->reply() : json();
  }
  // On a worker, which may wait.
  json on_worker(const std::string& cmd, json args, const gate::Actor& actor) {
    return dispatcher_->handle_line(line(cmd, std::move(args)), actor).reply();
  }
  std::vector<std::string> pending_ids() {
    json reply = on_loop(line("status"), agent_);
    EXPECT_TRUE(reply.value("ok", false)) << reply.dump();
    std::vector<std::string> ids;
    for (const auto& r : reply["result"]["pending_requests"]) ids.push_back(r["id"]);
    return ids;
  }

  gate::Actor agent_{100, 1000, 1000, false};
  gate::Actor person_{200, 0, 0, true};

  leasefs::test::TempDir tmp_;
  base::UniqueFd root_fd_;
  std::unique_ptr<state::LongrunDir> dir_;
  std::unique_ptr<state::StateStore> store_;
  testing::FakeMemory memory_;
  std::unique_ptr<memory::Ledger> ledger_;
  gate::Gate gate_;
  report::EventBus bus_;
  std::unique_ptr<service::Service> service_;
  std::unique_ptr<Dispatcher> dispatcher_;
};

TEST_F(LoopAnswers, StatusTurnAndEndTurnAreAnsweredOnTheLoop) {
  ASSERT_TRUE(on_worker("start", {{"description", "x"}}, agent_).value("ok", false));
  ASSERT_TRUE(on_worker("grant", {{"reason", "go"}}, person_).value("ok", false));

  json status = on_loop(line("status"), agent_);
  ASSERT_TRUE(status.value("ok", false)) << status.dump();
  EXPECT_EQ(status["id"], 7);
  EXPECT_EQ(status["result"]["grants"].size(), 1u) << status.dump();

  json turn = on_loop(line("turn"), person_);
  ASSERT_TRUE(turn.value("ok", false)) << turn.dump();
  EXPECT_EQ(service_->state().turn_index, 1u);
  EXPECT_TRUE(gate_.snapshot()->grants.empty());  // the turn revoked the lease

  json end = on_loop(line("end-turn"), person_);
  ASSERT_TRUE(end.value("ok", false)) << end.dump();
}

TEST_F(LoopAnswers, OtherCommandsKeyedRequestsAndLongLinesGoToAWorkerUnrun) {
  ASSERT_TRUE(on_worker("start", {{"description", "x"}}, agent_).value("ok", false));
  EXPECT_TRUE(on_loop(line("grant", {{"reason", "go"}}), person_).is_null());
  EXPECT_TRUE(on_loop(line("request", {{"reason", "edit"}}), agent_).is_null());
  EXPECT_TRUE(on_loop(line("revoke"), person_).is_null());
  EXPECT_TRUE(service_->state().grants.empty());
  EXPECT_TRUE(pending_ids().empty());

  json keyed = {{"id", 1}, {"cmd", "turn"}, {"idempotency_key", "k1"}};
  EXPECT_TRUE(on_loop(keyed.dump(), person_).is_null());
  std::string padded = line("turn");
  padded.insert(padded.size() - 1, std::string(5000, ' '));  // valid JSON, too long for the loop
  EXPECT_TRUE(on_loop(padded, person_).is_null());
  EXPECT_TRUE(on_loop("{not json", person_).is_null());  // a worker says what is wrong
  EXPECT_EQ(service_->state().turn_index, 0u);
}

// The agent holds the service's lock (a checkpoint saving to memory): the
// approver's turn is not waited for on the loop, it is handed over unrun, and a
// worker then runs it.
TEST_F(LoopAnswers, AHeldServiceLockHandsTheTurnOverHavingChangedNothing) {
  ASSERT_TRUE(on_worker("start", {{"description", "x"}}, agent_).value("ok", false));
  ASSERT_TRUE(on_worker("grant", {{"reason", "go"}}, person_).value("ok", false));
  std::mutex mu;
  std::condition_variable cv;
  bool saving = false, release = false;
  memory_.on_save = [&] {
    std::unique_lock lock(mu);
    saving = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  };
  std::thread agent([&] {
    on_worker("checkpoint", {{"summary", "half way"}, {"next", "the rest"}}, agent_);
  });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return saving; }));
  }
  EXPECT_TRUE(on_loop(line("turn"), person_).is_null());
  EXPECT_TRUE(on_loop(line("status"), person_).is_null());
  EXPECT_TRUE(on_loop(line("end-turn"), person_).is_null());
  EXPECT_EQ(gate_.snapshot()->turn, 0u);  // (the service's own state is behind its lock)
  {
    std::lock_guard lock(mu);
    release = true;
    cv.notify_all();
  }
  agent.join();
  json turn = on_worker("turn", json::object(), person_);
  ASSERT_TRUE(turn.value("ok", false)) << turn.dump();
  EXPECT_EQ(gate_.snapshot()->turn, 1u);
  EXPECT_TRUE(gate_.snapshot()->grants.empty());
}

// Status keeps no SQL on the loop: it shows the ledger's pending requests as
// they are after every change to them.
TEST_F(LoopAnswers, StatusShowsPendingRequestsAsTheyAreAfterEveryChange) {
  ASSERT_TRUE(on_worker("start", {{"description", "x"}}, agent_).value("ok", false));
  EXPECT_TRUE(pending_ids().empty());
  json r1 = on_worker("request", {{"reason", "edit a"}}, agent_);
  json r2 = on_worker("request", {{"reason", "edit b"}}, agent_);
  ASSERT_TRUE(r1.value("ok", false) && r2.value("ok", false)) << r1.dump() << r2.dump();
  const std::string id1 = r1["result"]["request"]["id"], id2 = r2["result"]["request"]["id"];
  EXPECT_EQ(pending_ids(), (std::vector<std::string>{id1, id2}));
  ASSERT_TRUE(on_worker("approve", {{"id", id1}}, person_).value("ok", false));
  EXPECT_EQ(pending_ids(), std::vector<std::string>{id2});
  ASSERT_TRUE(on_worker("reject", {{"id", id2}}, person_).value("ok", false));
  EXPECT_TRUE(pending_ids().empty());
  ASSERT_TRUE(on_worker("request", {{"reason", "edit c"}}, agent_).value("ok", false));
  EXPECT_EQ(pending_ids().size(), 1u);
  // Another task's requests are not this one's.
  json ended = on_worker("transition", {{"state", "failed"}, {"reason", "moving on"}}, person_);
  ASSERT_TRUE(ended.value("ok", false)) << ended.dump();
  ASSERT_TRUE(on_worker("start", {{"description", "y"}}, agent_).value("ok", false));
  EXPECT_TRUE(pending_ids().empty());
}

// Folding the state log into state.json rewrites and syncs a file: the turn that
// would do it is handed over, and the worker folds.
TEST_F(LoopAnswers, AFoldOfTheStateLogIsLeftToAWorker) {
  ASSERT_TRUE(on_worker("start", {{"description", "x"}}, agent_).value("ok", false));
  const std::string log = tmp_.path() + "/.longrun/state.log";
  auto size = [&] {
    struct stat st {};
    return ::stat(log.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  };
  uint64_t turns = 0;
  while (size() < state::StateStore::kCompactBytes) {
    ASSERT_FALSE(on_loop(line("turn"), person_).is_null()) << "at " << size() << " bytes";
    ++turns;
  }
  EXPECT_TRUE(on_loop(line("turn"), person_).is_null());
  EXPECT_EQ(service_->state().turn_index, turns);
  ASSERT_TRUE(on_worker("turn", json::object(), person_).value("ok", false));
  EXPECT_EQ(service_->state().turn_index, turns + 1);
  EXPECT_LT(size(), 4096u);  // folded
  EXPECT_FALSE(on_loop(line("turn"), person_).is_null());
}

}  // namespace
}  // namespace leasefs::control

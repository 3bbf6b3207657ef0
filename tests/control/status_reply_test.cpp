// status's reply is kept while nothing it shows changes (control/status_reply.hpp).
// A stale status misleads an approver, so: a view that differs in any field shown
// gets its own rendering, and every change the service makes is in the next reply,
// on the loop as on a worker.
#include "control/status_reply.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "base/json_text.hpp"
#include "control/commands.hpp"
#include "control/render.hpp"
#include "tests/control/service_site.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::control {
namespace {

using nlohmann::json;

// A view with something in every field, so that each can be changed.
StatusView full_view() {
  StatusView v;
  service::StatusReport& r = v.report;
  r.task.task_id = "T_1";
  r.task.description = "fix the timeout";
  r.task.done_when = "tests pass";
  r.task.keywords = {"timeout"};
  r.task.status = gate::TaskStatus::kInProgress;
  r.task.turn_index = 3;
  r.task.current_step = "reading";
  r.task.next_step = "editing";
  r.task.last_checkpoint_id = "C_1";
  r.turn = 3;
  gate::Grant g;
  g.id = "G_1";
  g.turn = 3;
  g.reason = "go";
  g.paths = {"src/*"};
  g.issued_ms = 1000;
  g.expires_ms = 5000;
  g.request_id = "R_1";
  r.grants = {g};
  service::PendingRequest p;
  p.request.id = "R_2";
  p.request.task_id = "T_1";
  p.request.turn = 3;
  p.request.reason = "edit docs";
  p.request.paths = {"docs/*"};
  p.request.requester_uid = 1000;
  p.request.requester_pid = 42;
  p.request.requester_command = "vim";
  r.pending_requests = {p};
  r.memory_records = 2;
  r.recent_refusals = {json{{"op", "write"}, {"path", "a"}, {"count", 1}}};
  r.refusals_total = 1;
  r.file_plane = json{{"fds", {{"open", 5}}}, {"inodes", 10}};
  r.disk = base::DiskReserve::Status{false, 16, 100, 0};
  r.protected_paths = {".longrun/**", ".git/config"};
  r.ask = {5000, true, true, 0};
  service::ForeignMount m;
  m.mount_point = "/x";
  m.fstype = "tmpfs";
  m.source = "none";
  m.uid = 1000;
  m.mount_id = 7;
  m.seen_ms = 9;
  r.foreign_mounts = {m};
  v.budget_refusals = json{{"connections", 0}, {"request_rate", 0}};
  v.journal = service::JournalStatus{true, 3, 10, 1, {}};
  return v;
}

using Change = std::pair<const char*, std::function<void(StatusView&)>>;

// One change per field the reply shows.
std::vector<Change> every_change() {
  return {
      {"no task", [](StatusView& v) { v.report.task = gate::TaskState{}; }},
      {"task id", [](StatusView& v) { v.report.task.task_id = "T_2"; }},
      {"description", [](StatusView& v) { v.report.task.description = "other"; }},
      {"done when", [](StatusView& v) { v.report.task.done_when = "never"; }},
      {"keywords", [](StatusView& v) { v.report.task.keywords.push_back("more"); }},
      {"task status", [](StatusView& v) { v.report.task.status = gate::TaskStatus::kBlocked; }},
      {"task's turn", [](StatusView& v) { v.report.task.turn_index = 4; }},
      {"current step", [](StatusView& v) { v.report.task.current_step = "testing"; }},
      {"next step", [](StatusView& v) { v.report.task.next_step = "done"; }},
      {"last checkpoint", [](StatusView& v) { v.report.task.last_checkpoint_id = "C_2"; }},
      {"turn", [](StatusView& v) { v.report.turn = 4; }},
      {"no grant", [](StatusView& v) { v.report.grants.clear(); }},
      {"grant id", [](StatusView& v) { v.report.grants[0].id = "G_2"; }},
      {"grant's turn", [](StatusView& v) { v.report.grants[0].turn = 2; }},
      {"grant reason", [](StatusView& v) { v.report.grants[0].reason = "stop"; }},
      {"grant approver", [](StatusView& v) { v.report.grants[0].approver_uid = 5; }},
      {"grant paths", [](StatusView& v) { v.report.grants[0].paths = {"**"}; }},
      {"grant ops", [](StatusView& v) { v.report.grants[0].ops = gate::OpMask{1}; }},
      {"grant issued", [](StatusView& v) { v.report.grants[0].issued_ms = 1001; }},
      {"grant expiry", [](StatusView& v) { v.report.grants[0].expires_ms = 6000; }},
      {"grant without expiry", [](StatusView& v) { v.report.grants[0].expires_ms.reset(); }},
      {"grant's request", [](StatusView& v) { v.report.grants[0].request_id.clear(); }},
      {"second grant", [](StatusView& v) { v.report.grants.push_back(v.report.grants[0]); }},
      {"no request", [](StatusView& v) { v.report.pending_requests.clear(); }},
      {"request id", [](StatusView& v) { v.report.pending_requests[0].request.id = "R_3"; }},
      {"request reason",
       [](StatusView& v) { v.report.pending_requests[0].request.reason = "edit more"; }},
      {"request paths",
       [](StatusView& v) { v.report.pending_requests[0].request.paths.push_back("b"); }},
      {"request state",
       [](StatusView& v) {
         v.report.pending_requests[0].request.state = memory::RequestState::approved;
       }},
      {"requester",
       [](StatusView& v) { v.report.pending_requests[0].request.requester_command = "sh"; }},
      {"request parked on", [](StatusView& v) { v.report.pending_requests[0].ask = true; }},
      {"pending checkpoint", [](StatusView& v) { v.report.pending_checkpoint = true; }},
      {"memory records", [](StatusView& v) { v.report.memory_records = 3; }},
      {"a new refusal",
       [](StatusView& v) {
         v.report.recent_refusals.push_back(json{{"op", "unlink"}});
       }},
      {"a refusal's count", [](StatusView& v) { v.report.recent_refusals[0]["count"] = 2; }},
      {"refusals total", [](StatusView& v) { v.report.refusals_total = 2; }},
      {"file plane counter", [](StatusView& v) { (*v.report.file_plane)["fds"]["open"] = 6; }},
      {"no file plane", [](StatusView& v) { v.report.file_plane.reset(); }},
      {"disk full", [](StatusView& v) { v.report.disk->full = true; }},
      {"disk reserve", [](StatusView& v) { v.report.disk->reserve_bytes = 0; }},
      {"disk free", [](StatusView& v) { v.report.disk->free_bytes = 99; }},
      {"disk reserve given up", [](StatusView& v) { v.report.disk->given_up = 1; }},
      {"no disk", [](StatusView& v) { v.report.disk.reset(); }},
      {"protected paths", [](StatusView& v) { v.report.protected_paths.push_back("secret"); }},
      {"ask timeout", [](StatusView& v) { v.report.ask.timeout_ms = 6000; }},
      {"ask off", [](StatusView& v) { v.report.ask.on = false; }},
      {"ask set by", [](StatusView& v) { v.report.ask.set_by_task = false; }},
      {"asks waiting", [](StatusView& v) { v.report.ask.waiting = 1; }},
      {"no foreign mount", [](StatusView& v) { v.report.foreign_mounts.clear(); }},
      {"foreign mount point", [](StatusView& v) { v.report.foreign_mounts[0].mount_point = "/y"; }},
      {"foreign mount seen", [](StatusView& v) { v.report.foreign_mounts[0].seen_ms = 10; }},
      {"state error",
       [](StatusView& v) {
         v.report.state_error = "state.json is corrupt";
         v.report.repair = "move it aside";
       }},
      {"budget refusals", [](StatusView& v) { v.budget_refusals["connections"] = 1; }},
      {"no budget counters", [](StatusView& v) { v.budget_refusals = nullptr; }},
      {"journal bytes", [](StatusView& v) { v.journal->bytes = 11; }},
      {"journal turns kept", [](StatusView& v) { v.journal->turns_kept = 2; }},
      {"journal not undoable", [](StatusView& v) { v.journal->not_undoable = {"big.bin"}; }},
      {"journal's turn", [](StatusView& v) { v.journal->turn = 4; }},
      {"journal off", [](StatusView& v) { v.journal->enabled = false; }},
      {"no journal", [](StatusView& v) { v.journal.reset(); }},
  };
}

std::string rendered(const StatusView& v) {
  return base::json_text(render(v));
}

TEST(StatusReplies, AnUnchangedViewGetsTheKeptText) {
  StatusReplies replies;
  auto first = replies.text(full_view());
  auto second = replies.text(full_view());
  EXPECT_EQ(first.get(), second.get()) << "the text was rendered again for the same view";
  EXPECT_EQ(*second, rendered(full_view()));
}

// Between two requests for the same view, each field changed alone: the reply
// for the changed view is its own rendering, never the kept text.
TEST(StatusReplies, AViewChangedInAnyFieldShownIsRenderedAgain) {
  StatusReplies replies;
  const std::string before = rendered(full_view());
  for (const auto& [what, change] : every_change()) {
    SCOPED_TRACE(what);
    ASSERT_EQ(*replies.text(full_view()), before);
    StatusView changed = full_view();
    change(changed);
    const std::string expected = rendered(changed);
    ASSERT_NE(expected, before) << "the change is not shown at all";
    EXPECT_EQ(*replies.text(changed), expected);
    EXPECT_EQ(*replies.text(changed), expected);  // and kept for it
    EXPECT_EQ(*replies.text(full_view()), before);
  }
}

// Threads asking for different views at once each get their own view's text.
TEST(StatusReplies, ConcurrentRequestsEachGetTheirViewsText) {
  StatusReplies replies;
  std::vector<StatusView> views;
  std::vector<std::string> texts;
  for (const auto& [what, change] : every_change()) {
    StatusView v = full_view();
    change(v);
    texts.push_back(rendered(v));
    views.push_back(std::move(v));
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < 2000; ++i) {
        const size_t k = (i * 7 + t) % views.size();
        if (*replies.text(views[k]) != texts[k]) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

// Through the dispatcher, with a real service: status asked again and again (so
// that its text is kept), and after each change the service makes, the next
// reply shows it, on the loop as on a worker.
class StatusAfterEachChange : public ::testing::Test {
 protected:
  void SetUp() override {
    service_->set_file_plane_status([this] { return json{{"inodes", inodes_.load()}}; });
    CommandContext ctx;
    ctx.service = service_;
    ctx.control_stats = [this] { return json{{"connections", refused_.load()}}; };
    dispatcher_ = std::make_unique<Dispatcher>(ctx, nullptr);
  }

  json run(const std::string& cmd, json args, const gate::Actor& actor) {
    return dispatcher_
        ->handle_line(json{{"id", 1}, {"cmd", cmd}, {"args", std::move(args)}}.dump(), actor)
        .reply();
  }
  void ok(const std::string& cmd, json args, const gate::Actor& actor) {
    json reply = run(cmd, std::move(args), actor);
    ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  }
  // status, asked three times (on the loop twice, then on a worker): the same
  // result each time, which is returned.
  json status() {
    const std::string line = R"({"id":2,"cmd":"status"})";
    auto first = dispatcher_->try_on_loop(line, agent_);
    auto again = dispatcher_->try_on_loop(line, agent_);
    json worker = dispatcher_->handle_line(line, person_).reply();
    EXPECT_TRUE(first && again);
    if (!first || !again) return json();
    EXPECT_EQ(first->line, again->line);
    EXPECT_EQ(first->reply(), worker);
    return worker.value("result", json());
  }

  gate::Actor agent_{100, 1000, 1000, false};
  gate::Actor person_{200, 0, 0, true};
  std::atomic<uint64_t> inodes_{1};
  std::atomic<uint64_t> refused_{0};

  ServiceSite site_;  // first: the dispatcher below is let go before it
  service::Service* const service_ = &site_.service;
  const test::TempDir& tmp_ = site_.tmp;
  std::unique_ptr<Dispatcher> dispatcher_;
};

TEST_F(StatusAfterEachChange, EveryFieldStatusShowsUpdatesWhenItShould) {
  EXPECT_TRUE(status()["task"].is_null());
  ok("start", {{"description", "fix the timeout"}}, agent_);
  EXPECT_EQ(status()["task"]["description"], "fix the timeout");

  ok("grant", {{"reason", "go"}, {"paths", {"src/*"}}}, person_);
  json s = status();
  EXPECT_EQ(s["access_mode"], "leased");
  ASSERT_EQ(s["grants"].size(), 1u);
  EXPECT_EQ(s["grants"][0]["reason"], "go");

  ok("request", {{"reason", "edit docs"}, {"paths", {"docs/*"}}}, agent_);
  s = status();
  ASSERT_EQ(s["pending_requests"].size(), 1u);
  EXPECT_EQ(s["pending_requests"][0]["reason"], "edit docs");
  ok("reject", {{"id", s["pending_requests"][0]["id"]}}, person_);
  EXPECT_TRUE(status()["pending_requests"].empty());

  service_->note_refusals({json{{"op", "write"}, {"path", "a.c"}, {"count", 3u}}});
  s = status();
  ASSERT_EQ(s["recent_refusals"].size(), 1u);
  EXPECT_EQ(s["recent_refusals"][0]["path"], "a.c");
  EXPECT_EQ(s["refusals_total"], 3);

  inodes_ = 2;
  EXPECT_EQ(status()["file_plane"]["inodes"], 2);
  refused_ = 1;
  EXPECT_EQ(status()["budget_refusals"]["connections"], 1);

  ok("ask", {{"wait", "30s"}}, person_);
  s = status();
  EXPECT_EQ(s["ask"]["set_by"], "task");
  EXPECT_EQ(s["ask"]["timeout_ms"], 30000);

  ok("memory.save", {{"title", "note"}, {"content", "timeouts are in ms"}}, agent_);
  EXPECT_EQ(status()["memory_records"], 1);

  ok("transition", {{"state", "blocked"}, {"reason", "waiting"}}, agent_);
  EXPECT_EQ(status()["task"]["status"], "blocked");
  ok("transition", {{"state", "in_progress"}}, agent_);
  EXPECT_EQ(status()["task"]["status"], "in_progress");

  const uint64_t turn = status()["turn"];
  ok("turn", json::object(), person_);
  s = status();
  EXPECT_EQ(s["turn"], turn + 1);
  EXPECT_EQ(s["task"]["turn"], turn + 1);
  EXPECT_TRUE(s["grants"].empty());
  EXPECT_EQ(s["access_mode"], "read_only");

  service::ForeignMount m;
  m.mount_point = tmp_.path() + "/sub";
  m.fstype = "tmpfs";
  service_->set_foreign_mounts({m});
  s = status();
  ASSERT_EQ(s["foreign_mounts"].size(), 1u);
  EXPECT_EQ(s["foreign_mounts"][0]["mount_point"], m.mount_point);
  service_->set_foreign_mounts({});
  EXPECT_TRUE(status()["foreign_mounts"].empty());
}

// Nothing but time changes: a grant that expires leaves status's list without a
// command in between.
TEST_F(StatusAfterEachChange, AGrantThatExpiresLeavesTheReply) {
  ok("start", {{"description", "x"}}, agent_);
  ok("grant", {{"reason", "briefly"}, {"ttl", "1s"}}, person_);
  ASSERT_EQ(status()["grants"].size(), 1u);
  // Polled one request at a time: status() asks three times, and the grant may
  // expire between two of them, so its three answers are compared only after.
  // A bound for a hang, far above the grant's second: not a measure of speed.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  const std::string line = R"({"id":2,"cmd":"status"})";
  auto polled = dispatcher_->try_on_loop(line, agent_);
  while (polled && polled->reply()["result"]["grants"].size() != 0 &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    polled = dispatcher_->try_on_loop(line, agent_);
  }
  const json s = status();
  EXPECT_TRUE(s["grants"].empty()) << s.dump();
  EXPECT_EQ(s["access_mode"], "read_only");
}

}  // namespace
}  // namespace leasefs::control

#include "memory/ledger.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <memory>
#include <thread>

#include "tests/support/temp_dir.hpp"

namespace leasefs::memory {
namespace {

constexpr std::uint32_t kAgent = 1000;
constexpr std::uint32_t kApprover = 0;

DecisionError refusal(Ledger& ledger, std::string_view id, Decision decision, std::int64_t turn) {
  try {
    ledger.decide(id, decision, "T_1", turn, kApprover, "");
  } catch (const LedgerError& error) {
    return error.error();
  }
  ADD_FAILURE() << "decision on " << id << " was not refused";
  return DecisionError::not_found;
}

TEST(Ledger, ARequestOfAnotherTaskIsRefusedAsStale) {
  Ledger ledger(":memory:");
  const Request request = ledger.create_request("T_A", 1, "edit A", {"a"}, kAgent);
  try {
    ledger.decide(request.id, Decision::approve, "T_B", 1, kApprover, "ok");
    ADD_FAILURE() << "a request of task T_A was approved for task T_B";
  } catch (const LedgerError& error) {
    EXPECT_EQ(error.error(), DecisionError::stale);
    EXPECT_NE(std::string(error.what()).find("T_A"), std::string::npos) << error.what();
  }
  EXPECT_EQ(ledger.find_request(request.id)->state, RequestState::pending);
}

TEST(Ledger, CreatesPendingRequestsWithReadableIds) {
  Ledger ledger(":memory:");
  const Request a =
      ledger.create_request("T_1", 3, "change the timeout in A", {"src/a.cpp"}, kAgent);
  const Request b = ledger.create_request("T_1", 3, "and B", {"src/b.cpp", "docs/**"}, kAgent);
  EXPECT_EQ(a.id, "R_0001");
  EXPECT_EQ(b.id, "R_0002");
  EXPECT_EQ(a.state, RequestState::pending);

  const auto found = ledger.find_request("R_0002");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->task_id, "T_1");
  EXPECT_EQ(found->turn, 3);
  EXPECT_EQ(found->reason, "and B");
  EXPECT_EQ(found->paths, (std::vector<std::string>{"src/b.cpp", "docs/**"}));
  EXPECT_EQ(found->requester_uid, kAgent);
  EXPECT_FALSE(found->decided_by);

  EXPECT_EQ(ledger.pending_requests("T_1").size(), 2u);
  EXPECT_TRUE(ledger.pending_requests("T_2").empty());
  EXPECT_FALSE(ledger.find_request("R_0099"));
}

TEST(Ledger, ApproveRecordsTheDecisionAndTheWords) {
  Ledger ledger(":memory:");
  const Request request =
      ledger.create_request("T_1", 5, "fix the timeout in A", {"a.cpp"}, kAgent);
  const DecisionOutcome outcome =
      ledger.decide(request.id, Decision::approve, "T_1", 5, kApprover, "yes, only the timeout");
  EXPECT_EQ(outcome.request.state, RequestState::approved);
  EXPECT_EQ(outcome.request.decided_by, kApprover);
  EXPECT_EQ(outcome.request.decision_reason, "yes, only the timeout");
  EXPECT_GT(outcome.request.decided_ms, 0);
  EXPECT_EQ(outcome.entry.kind, "approve");
  EXPECT_EQ(outcome.entry.text, "yes, only the timeout");
  EXPECT_EQ(outcome.entry.subject_id, request.id);
  EXPECT_TRUE(ledger.pending_requests("T_1").empty());

  const auto entries = ledger.entries(10);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].kind, "request");
  EXPECT_EQ(entries[0].text, "fix the timeout in A");
  EXPECT_EQ(entries[1].kind, "approve");
  EXPECT_EQ(entries[1].detail["request_reason"], "fix the timeout in A");
}

TEST(Ledger, RejectIsADecisionToo) {
  Ledger ledger(":memory:");
  const Request request = ledger.create_request("T_1", 1, "rewrite everything", {}, kAgent);
  const auto outcome = ledger.decide(request.id, Decision::reject, "T_1", 1, kApprover, "not now");
  EXPECT_EQ(outcome.request.state, RequestState::rejected);
  EXPECT_EQ(outcome.entry.kind, "reject");
  EXPECT_EQ(refusal(ledger, request.id, Decision::approve, 1), DecisionError::already_decided);
}

TEST(Ledger, DoubleApproveIsAlreadyDecided) {
  Ledger ledger(":memory:");
  const Request request = ledger.create_request("T_1", 2, "edit A", {"a"}, kAgent);
  ledger.decide(request.id, Decision::approve, "T_1", 2, kApprover, "ok");
  try {
    ledger.decide(request.id, Decision::approve, "T_1", 2, kApprover, "ok again");
    FAIL() << "second approval accepted";
  } catch (const LedgerError& error) {
    EXPECT_EQ(error.error(), DecisionError::already_decided);
    EXPECT_EQ(error.code(), "already_decided");
    ASSERT_TRUE(error.request());
    EXPECT_EQ(error.request()->state, RequestState::approved);
    EXPECT_EQ(error.request()->decision_reason, "ok");
    EXPECT_NE(std::string(error.what()).find(request.id), std::string::npos);
  }
  // The refused decision left no ledger row.
  EXPECT_EQ(ledger.entries(10).size(), 2u);
}

TEST(Ledger, OlderTurnIsStale) {
  Ledger ledger(":memory:");
  const Request request = ledger.create_request("T_1", 4, "edit A", {"a"}, kAgent);
  // Still listed as pending, but it can no longer be decided.
  EXPECT_EQ(ledger.pending_requests("T_1").size(), 1u);
  try {
    ledger.decide(request.id, Decision::approve, "T_1", 5, kApprover, "ok");
    FAIL() << "stale approval accepted";
  } catch (const LedgerError& error) {
    EXPECT_EQ(error.error(), DecisionError::stale);
    EXPECT_EQ(error.code(), "stale_request");
    EXPECT_NE(std::string(error.what()).find("turn 4"), std::string::npos) << error.what();
  }
  EXPECT_EQ(ledger.find_request(request.id)->state, RequestState::pending);
}

TEST(Ledger, UnknownIdIsNotFound) {
  Ledger ledger(":memory:");
  try {
    ledger.decide("R_0042", Decision::approve, "T_1", 1, kApprover, "ok");
    FAIL() << "unknown request approved";
  } catch (const LedgerError& error) {
    EXPECT_EQ(error.error(), DecisionError::not_found);
    EXPECT_EQ(error.code(), "not_found");
    EXPECT_FALSE(error.request());
  }
  EXPECT_TRUE(ledger.entries(10).empty());
}

TEST(Ledger, RecordsGrantsAndRevokes) {
  Ledger ledger(":memory:");
  GrantRecord grant;
  grant.grant_id = "G_0001";
  grant.task_id = "T_1";
  grant.turn = 7;
  grant.approver_uid = kApprover;
  grant.reason = "change the timeout in A, nothing else";
  grant.paths = {"src/a.cpp"};
  grant.ops = {"write"};
  grant.ttl_ms = 600000;
  const LedgerEntry granted = ledger.record_grant(grant);
  EXPECT_EQ(granted.kind, "grant");
  EXPECT_GT(granted.seq, 0);

  RevokeRecord revoke;
  revoke.grant_id = "G_0001";
  revoke.task_id = "T_1";
  revoke.turn = 7;
  revoke.actor_uid = kAgent;
  revoke.reason = "turn advanced";
  ledger.record_revoke(revoke);

  const auto entries = ledger.entries(10);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].text, "change the timeout in A, nothing else");
  EXPECT_EQ(entries[0].detail["paths"], nlohmann::json({"src/a.cpp"}));
  EXPECT_EQ(entries[0].detail["ops"], nlohmann::json({"write"}));
  EXPECT_EQ(entries[0].detail["ttl_ms"], 600000);
  EXPECT_EQ(entries[0].turn, 7);
  EXPECT_EQ(entries[1].kind, "revoke");
  EXPECT_EQ(entries[1].subject_id, "G_0001");
  EXPECT_EQ(ledger.entries(1).size(), 1u);
  EXPECT_EQ(ledger.entries(1)[0].kind, "revoke");
}

TEST(Ledger, ConcurrentApprovalsFromSeparateConnectionsSucceedOnce) {
  test::TempDir dir;
  const std::string path = dir.file("memory.db");
  const std::string id = Ledger(path).create_request("T_1", 1, "edit A", {"a"}, kAgent).id;

  constexpr int kThreads = 8;
  std::atomic<int> approved{0};
  std::atomic<int> already_decided{0};
  std::atomic<int> other{0};
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto ledger = std::make_unique<Ledger>(path);  // its own connection
      start.arrive_and_wait();
      try {
        ledger->decide(id, Decision::approve, "T_1", 1, kApprover, "ok from " + std::to_string(i));
        ++approved;
      } catch (const LedgerError& error) {
        ++(error.error() == DecisionError::already_decided ? already_decided : other);
      } catch (...) {
        ++other;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(approved.load(), 1);
  EXPECT_EQ(already_decided.load(), kThreads - 1);
  EXPECT_EQ(other.load(), 0);

  Ledger ledger(path);
  int approvals = 0;
  for (const auto& entry : ledger.entries(100)) approvals += entry.kind == "approve";
  EXPECT_EQ(approvals, 1);
}

TEST(Ledger, ManyWritersOnOneFile) {
  test::TempDir dir;
  const std::string path = dir.file("memory.db");
  constexpr int kThreads = 4;
  constexpr int kEach = 25;
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Ledger ledger(path);
      start.arrive_and_wait();
      for (int i = 0; i < kEach; ++i) ledger.create_request("T_1", 1, "r", {}, kAgent);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(Ledger(path).pending_requests("T_1").size(),
            static_cast<std::size_t>(kThreads * kEach));
  EXPECT_TRUE(Ledger(path).find_request("R_0100"));
}

}  // namespace
}  // namespace leasefs::memory

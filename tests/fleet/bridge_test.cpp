// The bridge against the real ledger and the real daemon: a request goes out, a
// person's decision comes back and becomes a lease only for the request, digest
// and turn it was made on, once.
#include <gtest/gtest.h>

#include "base/failpoint.hpp"
#include "tests/fleet/bridge_site.hpp"

namespace leasefs::test {
namespace {

constexpr const char* kOutcomes = "SELECT count(*) FROM fleet.decision_outcomes";

TEST_F(FleetBridgeTest, ARequestGoesOutAndAnApprovalComesBackAsOneLease) {
  ASSERT_FALSE(agent_can_write()) << "the agent wrote without a lease";
  start_bridge();
  ASSERT_EQ(agent_request("raise the timeout").exit_code, 0);
  ASSERT_TRUE(ledger_says("SELECT count(*) FROM fleet.requests", "1")) << bridge_log();
  fleet::PgResult row = ledger.pg.admin().exec(
      "SELECT local_id, reason, paths::text, requester_uid, machine, project_id FROM "
      "fleet.requests");
  EXPECT_EQ(row.text(0, 0), "R_0001");
  EXPECT_EQ(row.text(0, 1), "raise the timeout");
  EXPECT_EQ(row.text(0, 2), "[\"src/**\"]");
  EXPECT_EQ(row.text(0, 3), std::to_string(agent_uid));
  EXPECT_EQ(row.text(0, 4), "machine_a");
  EXPECT_EQ(row.text(0, 5), project);

  auto [id, digest] = filed("R_0001");
  const std::string decision = decide(id, "approve", digest);
  ASSERT_TRUE(ledger_says("SELECT outcome FROM fleet.decision_outcomes", "applied"))
      << bridge_log();
  EXPECT_EQ(status()["grants"].size(), 1u);
  EXPECT_TRUE(agent_can_write()) << "the approved lease does not open the write";
  EXPECT_EQ(read_text(root + "/src/a.txt"), "timeout = 30\n");
  // The local audit says where the decision came from.
  auto decisions = audit_events_when("decision", 1);
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].value("source", ""), "fleet:" + decision);
  EXPECT_EQ(decisions[0].value("uid", 0u), bridge_uid);
  // And every audit record reaches the ledger, in order, as the file holds it.
  EXPECT_TRUE(audit_shipped()) << bridge_log();
  // The centre is reachable, as the bridge said.
  EXPECT_EQ(centre(), "reachable");
}

}  // namespace
}  // namespace leasefs::test

namespace leasefs::test {
namespace {

TEST_F(FleetBridgeTest, ARejectionComesBackAsARejection) {
  start_bridge();
  ASSERT_EQ(agent_request("rewrite everything").exit_code, 0);
  ASSERT_TRUE(ledger_says("SELECT count(*) FROM fleet.requests", "1")) << bridge_log();
  auto [id, digest] = filed("R_0001");
  decide(id, "reject", digest);
  ASSERT_TRUE(ledger_says("SELECT outcome FROM fleet.decision_outcomes", "applied"))
      << bridge_log();
  EXPECT_TRUE(status()["grants"].empty());
  EXPECT_TRUE(status()["pending_requests"].empty());
  EXPECT_FALSE(agent_can_write());
  auto decisions = audit_events_when("decision", 1);
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].value("decision", ""), "reject");
}

// A decision bound to one request's digest, replayed onto another request, or
// made for a request whose turn has moved on, is dropped, reported and audited.
TEST_F(FleetBridgeTest, AnApprovalReplayedOntoAnotherRequestOrALaterTurnIsRefused) {
  start_bridge();
  ASSERT_EQ(agent_request("first").exit_code, 0);
  ASSERT_EQ(agent_request("second").exit_code, 0);
  ASSERT_TRUE(ledger_says("SELECT count(*) FROM fleet.requests", "2")) << bridge_log();
  auto [first_id, first_digest] = filed("R_0001");
  auto [second_id, second_digest] = filed("R_0002");
  ASSERT_NE(first_digest, second_digest);
  // The first request's approval, replayed onto the second.
  const std::string replayed = decide(second_id, "approve", first_digest);
  ASSERT_TRUE(ledger_says(
      "SELECT outcome FROM fleet.decision_outcomes WHERE decision_id = " + replayed, "stale"))
      << bridge_log();
  EXPECT_TRUE(status()["grants"].empty());
  EXPECT_FALSE(agent_can_write());

  // The turn moves on; a decision for the old turn's request comes late.
  ASSERT_EQ(agent(q(LEASECTL_PATH) + " --socket " + q(sock) + " turn").exit_code, 0);
  const std::string late = decide(first_id, "approve", first_digest);
  ASSERT_TRUE(ledger_says("SELECT outcome FROM fleet.decision_outcomes WHERE decision_id = " + late,
                          "stale"))
      << bridge_log();
  EXPECT_TRUE(status()["grants"].empty());
  EXPECT_FALSE(agent_can_write());
  EXPECT_TRUE(audit_events("decision").empty());
  auto dropped = audit_events_when("fleet_decision_dropped", 2);
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_EQ(dropped[0].value("decision_id", ""), replayed);
  EXPECT_EQ(dropped[1].value("decision_id", ""), late);
}

// The bridge dies (as kill -9 would: no cleanup) at each step in turn, and is
// started again: one request row, one grant, one outcome, the audit whole.
TEST_F(FleetBridgeTest, KilledAtEachStepTheBridgeGivesOneGrantOnce) {
  int round = 0;
  for (const std::string point : {"bridge.after_requests", "bridge.mid_audit_batch",
                                  "bridge.after_read_decision", "bridge.after_apply"}) {
    SCOPED_TRACE(point);
    ++round;
    const std::string local = "R_000" + std::to_string(round);
    ASSERT_EQ(agent(q(LEASECTL_PATH) + " --socket " + q(sock) + " turn").exit_code, 0);
    ASSERT_EQ(agent_request("round " + std::to_string(round)).exit_code, 0);
    const bool before_decision =
        point == "bridge.after_requests" || point == "bridge.mid_audit_batch";
    std::string decision;
    if (!before_decision) {
      start_bridge();
      ASSERT_TRUE(wait_until([&] { return !filed(local).first.empty(); }, 60)) << bridge_log();
      stop_bridge();
      auto [id, digest] = filed(local);
      decision = decide(id, "approve", digest);
    }
    start_bridge(point);
    EXPECT_EQ(wait_bridge_exit(), base::kFailpointExitCode) << bridge_log();
    if (before_decision) {
      auto [id, digest] = filed(local);
      ASSERT_FALSE(id.empty()) << bridge_log();
      decision = decide(id, "approve", digest);
    }
    start_bridge();
    ASSERT_TRUE(ledger_says(
        "SELECT outcome FROM fleet.decision_outcomes WHERE decision_id = " + decision, "applied"))
        << bridge_log();
    EXPECT_EQ(ledger_value("SELECT count(*) FROM fleet.requests WHERE local_id = $1", {local}),
              "1");
    const nlohmann::json grants = status()["grants"];
    ASSERT_EQ(grants.size(), 1u) << grants.dump();
    EXPECT_EQ(grants[0].value("request_id", ""), local);
    size_t applied = 0;
    for (const auto& e : audit_events_when("decision", static_cast<size_t>(round))) {
      applied += e.value("request_id", "") == local;
    }
    EXPECT_EQ(applied, 1u);
    EXPECT_TRUE(audit_shipped()) << bridge_log();
    stop_bridge();
  }
  EXPECT_EQ(ledger_value(kOutcomes), "4");
}

TEST_F(FleetBridgeTest, PostgresStoppedKeepsWritesRefusedALocalApproverStillDecides) {
  start_bridge();
  ASSERT_TRUE(wait_until([&] { return centre() == "reachable"; }, 60)) << bridge_log();
  ledger.pg.signal_all(SIGSTOP);
  ASSERT_EQ(agent_request("while the centre sleeps").exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return centre() == "unreachable"; }, 90)) << bridge_log();
  EXPECT_NE(read_text(root + "/.longrun/status.md").find("centre is unreachable"),
            std::string::npos);
  EXPECT_FALSE(agent_can_write());
  // A person on the machine still decides, audited as local.
  ASSERT_EQ(leasectl({"approve", "R_0001", "--reason", "done by hand"}).exit_code, 0);
  EXPECT_TRUE(agent_can_write());
  auto decisions = audit_events_when("decision", 1);
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].value("source", ""), "local");
  EXPECT_EQ(decisions[0].value("uid", 1u), 0u);
  ledger.pg.signal_all(SIGCONT);
  ASSERT_TRUE(wait_until([&] { return centre() == "reachable"; }, 90)) << bridge_log();
  EXPECT_TRUE(audit_shipped()) << bridge_log();
  std::vector<std::string> centre;
  for (const auto& e : audit_events_when("fleet", 3)) centre.push_back(e.value("centre", ""));
  EXPECT_EQ(centre, (std::vector<std::string>{"reachable", "unreachable", "reachable"}));
}

TEST_F(FleetBridgeTest, ADecisionForARequestTheDaemonNeverHadIsRefusedAndAudited) {
  start_bridge();
  ASSERT_TRUE(wait_until([&] { return centre() == "reachable"; }, 60)) << bridge_log();
  // A row the machine's role could file, for a request the daemon never had.
  const std::string digest(64, 'a');
  const std::string ghost =
      fleet::PgConnection::open(machine_conninfo)
          .exec(
              "INSERT INTO fleet.requests (project_id, local_id, task_id, turn, paths, ops,"
              " reason, created_ms, digest) VALUES ($1, 'R_0099', 'T_nope', 0, '[]', '[]',"
              " 'never asked', 0, $2) RETURNING id",
              {project, digest})
          .text(0, 0);
  const std::string decision = decide(ghost, "approve", digest);
  ASSERT_TRUE(ledger_says(
      "SELECT outcome FROM fleet.decision_outcomes WHERE decision_id = " + decision, "stale"))
      << bridge_log();
  EXPECT_NE(ledger_value("SELECT detail FROM fleet.decision_outcomes").find("refused"),
            std::string::npos);
  EXPECT_TRUE(status()["grants"].empty());
  auto dropped = audit_events_when("fleet_decision_dropped", 1);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].value("request_id", ""), "R_0099");
}

}  // namespace
}  // namespace leasefs::test

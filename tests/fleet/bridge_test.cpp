// The bridge against the real ledger and the real daemon: a request goes out, a
// person's decision comes back and becomes a lease only for the request, digest
// and turn it was made on, once.
#include <gtest/gtest.h>

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
  auto decisions = audit_events("decision");
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].value("source", ""), "fleet:" + decision);
  EXPECT_EQ(decisions[0].value("uid", 0u), bridge_uid);
  // And every audit record reaches the ledger, in order, as the file holds it.
  EXPECT_TRUE(audit_shipped()) << bridge_log();
  // The centre is reachable, as the bridge said.
  EXPECT_EQ(status()["fleet"].value("centre", ""), "reachable");
}

}  // namespace
}  // namespace leasefs::test

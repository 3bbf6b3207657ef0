// Central policy through the fleet: a row the administrator inserts reaches the
// daemon through the bridge (woken by the row's NOTIFY) and tightens the gate; a
// malformed row is refused by the daemon, audited, and loosens nothing; a row
// for another machine never reaches this one.
#include <gtest/gtest.h>

#include "tests/fleet/bridge_site.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

TEST_F(FleetBridgeTest, APolicyRowReachesTheDaemonAndAWriteThroughTheMountIsRefused) {
  start_bridge();
  ASSERT_TRUE(wait_until([&] { return centre() == "reachable"; }, 60)) << bridge_log();
  ASSERT_EQ(leasectl({"grant", "--reason", "the whole tree"}).exit_code, 0);
  ASSERT_TRUE(agent_can_write()) << "the grant does not open the write";

  // Another machine's row: this one's bridge never reads it (row-level security).
  ledger.enroll_machine("machine_b");
  ledger.pg.admin().exec(
      "INSERT INTO fleet.policy (machine, scope, rule, owner) VALUES ('machine_b', '*',"
      " '{\"kind\":\"protect\",\"globs\":[\"**\"]}', 'ops')");
  const std::string id = ledger_value(
      "INSERT INTO fleet.policy (machine, scope, rule, owner) VALUES (NULL, '*',"
      " '{\"kind\":\"protect\",\"globs\":[\"src/**\"]}', 'security team') RETURNING id");
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(
      wait_until([&] { return status()["policy"].value("rules", json::array()).size() == 1; }, 60))
      << bridge_log();
  const json policy = status()["policy"];
  EXPECT_EQ(policy["rules"][0].value("source", ""), "policy:" + id);
  EXPECT_EQ(policy["rules"][0].value("owner", ""), "security team");
  EXPECT_FALSE(agent_can_write()) << "a centrally protected path was written";
  EXPECT_EQ(read_text(root + "/src/a.txt"), "timeout = 30\n");
  auto applied = audit_events_when("policy_applied", 1);
  ASSERT_GE(applied.size(), 1u);
  EXPECT_EQ(applied.back().value("version", ""), policy.value("version", ""));
  EXPECT_EQ(applied.back()["rules"], json({id}));

  // A malformed row: the daemon refuses the policy it comes in, by the row's id,
  // and the rule in force stays.
  const std::string bad = ledger_value(
      "INSERT INTO fleet.policy (machine, scope, rule, owner) VALUES ('machine_a', '*',"
      " '{\"kind\":\"unprotect\",\"globs\":[\"src/**\"]}', 'someone') RETURNING id");
  auto refused = audit_events_when("policy_refused", 1);
  ASSERT_EQ(refused.size(), 1u) << bridge_log();
  EXPECT_EQ(refused[0].value("rule", ""), bad);
  EXPECT_EQ(status()["policy"].value("version", ""), policy.value("version", ""));
  EXPECT_FALSE(agent_can_write());

  // The administrator deletes both: the daemon is sent an empty policy, and the
  // grant opens the tree again.
  ledger.pg.admin().exec("DELETE FROM fleet.policy WHERE machine IS DISTINCT FROM 'machine_b'");
  ASSERT_TRUE(
      wait_until([&] { return status()["policy"].value("rules", json::array()).empty(); }, 60))
      << bridge_log();
  EXPECT_TRUE(agent_can_write());
}

}  // namespace
}  // namespace leasefs::test

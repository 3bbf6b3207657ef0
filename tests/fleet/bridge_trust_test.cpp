// The agent against the fleet, from its own uid: it reads no fleet credential,
// cannot log in as the machine or a person, cannot be named an approver, and
// the bridge refuses to start on credentials it could read or as root.
#include <gtest/gtest.h>

#include "tests/fleet/bridge_site.hpp"

namespace leasefs::test {
namespace {

TEST_F(FleetBridgeTest, TheAgentCannotReadTheCredentialsNorActAsTheMachineNorDecide) {
  RunResult cat = agent("cat " + q(credentials));
  EXPECT_NE(cat.exit_code, 0);
  EXPECT_NE(cat.output.find("Permission denied"), std::string::npos) << cat.output;
  EXPECT_EQ(cat.output.find(ledger.passwords.at("machine_a")), std::string::npos);
  // Without the password, the machine's and a person's roles stay shut, even on
  // the server's socket the agent can reach.
  for (const std::string role : {"machine_a", "alice", "fleet_admin"}) {
    RunResult psql = agent("PGCONNECT_TIMEOUT=5 psql -X -w " +
                           q("host=" + ledger.pg.socket_dir() + " dbname=fleet user=" + role) +
                           " -c \"INSERT INTO fleet.decisions (request_id, decision, digest)"
                           " VALUES (1, 'approve', repeat('a', 64))\"");
    EXPECT_NE(psql.exit_code, 0) << role;
    EXPECT_NE(psql.output.find("no password supplied"), std::string::npos) << psql.output;
  }
  EXPECT_EQ(ledger_value("SELECT count(*) FROM fleet.decisions"), "0");
  // On the daemon's socket, the agent is no bridge.
  for (const std::string cmd :
       {"fleet report --centre reachable --detail forged", "audit records", "approve R_0001"}) {
    RunResult r = agent(q(LEASECTL_PATH) + " --socket " + q(sock) + " " + cmd);
    EXPECT_EQ(r.exit_code, 1) << cmd << ": " << r.output;
    EXPECT_NE(r.output.find("forbidden"), std::string::npos) << cmd << ": " << r.output;
  }
  EXPECT_TRUE(audit_events("fleet").empty());
}

TEST_F(FleetBridgeTest, TheAgentsUidCannotBeNamedAnApprover) {
  const std::string other = base + "/other";
  ::mkdir(other.c_str(), 0755);
  ASSERT_EQ(::chown(other.c_str(), agent_uid, agent_gid), 0);
  RunResult r = leasefs({"mount", other, "--agent", users[0], "--socket", base + "/other.sock",
                         "--approver-uid", std::to_string(agent_uid)},
                        other, other);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("must never approve"), std::string::npos) << r.output;
  EXPECT_FALSE(base::leasefs_mount_at(other));
  r = leasefs({"mount", other, "--agent", users[0], "--socket", base + "/other.sock",
               "--approver-gid", std::to_string(agent_gid)},
              other, other);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_FALSE(base::leasefs_mount_at(other));
}

TEST_F(FleetBridgeTest, TheBridgeRefusesCredentialsOthersCouldReadRootAndAnUnknownMachine) {
  // Readable by the group or by others.
  for (mode_t mode : {0640, 0604}) {
    ASSERT_EQ(::chmod(credentials.c_str(), mode), 0);
    start_bridge();
    EXPECT_EQ(wait_bridge_exit(), 1);
    EXPECT_NE(bridge_log().find("others may read it"), std::string::npos) << bridge_log();
  }
  ASSERT_EQ(::chmod(credentials.c_str(), 0600), 0);
  // Owned by another uid (the agent's): the bridge's uid cannot vouch for it.
  const std::string foreign = base + "/foreign.conninfo";
  write_credentials(foreign, machine_conninfo, agent_uid, 0600);
  ::chmod(foreign.c_str(), 0644);  // readable, so that only the owner check refuses it
  start_bridge("", foreign);
  EXPECT_EQ(wait_bridge_exit(), 1);
  EXPECT_NE(bridge_log().find("not to the bridge's uid"), std::string::npos) << bridge_log();
  // As root.
  RunResult as_root =
      run_argv({BRIDGE_BIN, "run", "--credentials", credentials, "--daemon", root + "=" + sock},
               RunOptions{.cwd = base, .timeout_s = 30});
  EXPECT_EQ(as_root.exit_code, 1);
  EXPECT_NE(as_root.output.find("refusing to run as root"), std::string::npos) << as_root.output;
  // A person's role is no machine.
  const std::string person = base + "/person.conninfo";
  write_credentials(person, ledger.pg.conninfo("alice", ledger.passwords.at("alice")), bridge_uid,
                    0600);
  start_bridge("", person);
  EXPECT_EQ(wait_bridge_exit(), 1);
  EXPECT_NE(bridge_log().find("'alice' is not an enrolled machine"), std::string::npos)
      << bridge_log();
  EXPECT_EQ(ledger_value("SELECT count(*) FROM fleet.projects WHERE machine = 'alice'"), "0");
}

}  // namespace
}  // namespace leasefs::test

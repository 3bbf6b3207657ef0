// Signed turns reach the ledger: the bridge ships each signed head after the
// audit records it covers, once, through the daemon's audit.heads; `leasectl
// fleet verify` finds a shipped chain with its heads clean, and names a changed
// byte of a checkpoint, a chain rewritten to match its own hashes, a column that
// is not what its checkpoint signs, and turns that ended with no head.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/failpoint.hpp"
#include "base/json_text.hpp"
#include "base/sha256.hpp"
#include "tests/fleet/heads_site.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

// Two turns' heads, shipped and verified clean.
class FleetHeadsShipped : public FleetHeadsTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(FleetHeadsTest::SetUp());
    start_bridge();
    ASSERT_NO_FATAL_FAILURE(end_turn("turn", 1));
    ASSERT_NO_FATAL_FAILURE(end_turn("end-turn", 2));
    ASSERT_TRUE(heads_shipped(2)) << bridge_log();
    ASSERT_TRUE(audit_shipped()) << bridge_log();
    stop_bridge();  // what the ledger holds is what the test changes next
  }
};

TEST_F(FleetHeadsShipped, TwoTurnsHeadsAreShippedAsSignedAndVerifyClean) {
  const std::vector<std::string> local = local_heads();
  const auto shipped = ledger_heads();
  ASSERT_EQ(shipped.size(), 2u);
  for (size_t i = 0; i < shipped.size(); ++i) {
    SCOPED_TRACE(i);
    // The exact checkpoint text, and the size and hash of the record it signs.
    EXPECT_EQ(shipped[i][2], local[i]);
    EXPECT_NE(local[i].find("\n" + shipped[i][0] + "\n"), std::string::npos) << local[i];
    EXPECT_EQ(shipped[i][1],
              ledger_value("SELECT hash FROM fleet.audit_records WHERE seq = $1", {shipped[i][0]}));
  }
  EXPECT_EQ(ledger_value("SELECT DISTINCT machine FROM fleet.signed_heads"), "machine_a");
  // Each head went in after the record it signs, in a later transaction.
  EXPECT_EQ(ledger_value("SELECT bool_and(h.shipped_at >= r.shipped_at) FROM fleet.signed_heads h"
                         " JOIN fleet.audit_records r ON r.project_id = h.project_id"
                         " AND r.seq = h.size"),
            "t");
  RunResult r = fleet_verify();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 chains, " + std::to_string(audit_lines().size()) +
                          " records, 2 signed heads: clean"),
            std::string::npos)
      << r.output;
}

TEST_F(FleetHeadsShipped, OneChangedByteOfAShippedCheckpointIsABadSignature) {
  const auto shipped = ledger_heads();
  std::string checkpoint = shipped[0][2];
  // The root hash's line (the third): one base64 character changed.
  size_t at = 0;
  for (int line = 0; line < 2; ++line) at = checkpoint.find('\n', at) + 1;
  at += 5;
  checkpoint[at] = checkpoint[at] == 'A' ? 'B' : 'A';
  ledger.pg.admin().exec("UPDATE fleet.signed_heads SET checkpoint = $1 WHERE size = $2",
                         {checkpoint, shipped[0][0]});
  RunResult r = fleet_verify();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(finding("bad_signature") + "the signed head in the row of size " +
                          shipped[0][0] + ": the signature by leasefs/"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1 chain(s) with findings"), std::string::npos) << r.output;
}

TEST_F(FleetHeadsShipped, AHeadIsAMismatchWhenTheChainOrItsRowNoLongerSaysWhatItSigned) {
  const auto shipped = ledger_heads();
  // The row's root_hash column made another record's hash; its checkpoint is intact.
  ledger.pg.admin().exec(
      "UPDATE fleet.signed_heads SET root_hash = (SELECT hash FROM fleet.audit_records"
      " WHERE seq = 1) WHERE size = $1",
      {shipped[1][0]});
  RunResult r = fleet_verify();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(finding("mismatch") + "the row of size " + shipped[1][0] +
                          " is not what its checkpoint signs"),
            std::string::npos)
      << r.output;
  ledger.pg.admin().exec("UPDATE fleet.signed_heads SET root_hash = $1 WHERE size = $2",
                         {shipped[1][1], shipped[1][0]});
  ASSERT_EQ(fleet_verify().exit_code, 0);

  // The shipped chain rewritten from record 2 on, each hash recomputed so that
  // the records hold together: only the signed heads can tell.
  fleet::PgResult rows = ledger.pg.admin().exec(
      "SELECT seq, ts_ms, prev, event::text FROM fleet.audit_records ORDER BY seq");
  std::string prev = rows.text(0, 2);
  for (int i = 0; i < rows.rows(); ++i) {
    const uint64_t seq = std::stoull(rows.text(i, 0));
    const int64_t ts_ms = std::stoll(rows.text(i, 1));
    json event = json::parse(rows.text(i, 3));
    if (seq == 1) {
      prev = base::sha256_hex(
          base::json_text(json{{"seq", seq}, {"ts_ms", ts_ms}, {"event", event}, {"prev", prev}}));
      continue;
    }
    if (seq == 2) event["rewritten"] = true;
    const json body = {{"seq", seq}, {"ts_ms", ts_ms}, {"event", event}, {"prev", prev}};
    const std::string hash = base::sha256_hex(base::json_text(body));
    json line = body;
    line["hash"] = hash;
    ledger.pg.admin().exec(
        "UPDATE fleet.audit_records SET prev = $1, hash = $2, line = $3, event = $4::jsonb"
        " WHERE seq = $5",
        {prev, hash, base::json_text(line), event.dump(), std::to_string(seq)});
    prev = hash;
  }
  ledger.pg.admin().exec("UPDATE fleet.audit_heads SET hash = $1", {prev});
  r = fleet_verify();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(finding("mismatch") + "the signed head in the row of size " +
                          shipped[0][0] + ": the signed hash at size " + shipped[0][0] +
                          " is not the chain's record there"),
            std::string::npos)
      << r.output;
}

// The daemon restarted with its key gone: its turns end unsigned after the last
// head it shipped, and the verifier calls that silence, with why.
TEST_F(FleetHeadsShipped, TurnsThatEndedAfterTheLastShippedHeadAreSilence) {
  const std::string shipped_size = ledger_heads().back()[0];
  RunResult down = run_binary(LEASEFS_BIN, {"unmount", root}, 60);
  ASSERT_EQ(down.exit_code, 0) << down.output;
  ASSERT_EQ(::rename(key.c_str(), (key + ".gone").c_str()), 0);
  std::vector<std::string> mount = {
      "mount",         root, "--agent",        users[0],
      "--socket",      sock, "--approver-uid", std::to_string(bridge_uid),
      "--signing-key", key};
  RunResult up = leasefs(mount, root, root);
  ASSERT_EQ(up.exit_code, 0) << up.output;
  start_bridge();
  ASSERT_EQ(leasectl({"turn"}).exit_code, 0);
  ASSERT_EQ(audit_events_when("head_unsigned", 1).size(), 1u);
  ASSERT_TRUE(audit_shipped()) << bridge_log();
  EXPECT_EQ(ledger_value("SELECT max(size) FROM fleet.signed_heads"), shipped_size);
  RunResult r = fleet_verify();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(finding("silence") + "the turn that ended at record "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(the last signed size is " + shipped_size +
                          "); the chain records that the daemon had no key to sign with"),
            std::string::npos)
      << r.output;
}

// The bridge dies (as kill -9 would) after the records and before the heads,
// then inside the heads' transaction: started again, it ships each head once.
TEST_F(FleetHeadsTest, KilledBetweenRecordsAndHeadsTheBridgeShipsEachHeadOnce) {
  ASSERT_NO_FATAL_FAILURE(end_turn("turn", 1));
  ASSERT_NO_FATAL_FAILURE(end_turn("end-turn", 2));
  start_bridge("bridge.after_audit_batch");
  EXPECT_EQ(wait_bridge_exit(), base::kFailpointExitCode) << bridge_log();
  ASSERT_NE(ledger_value("SELECT count(*) FROM fleet.audit_records"), "0");
  EXPECT_EQ(ledger_value("SELECT count(*) FROM fleet.signed_heads"), "0");
  // Meanwhile the centre sees a chain whose records say heads were signed.
  RunResult r = fleet_verify();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(finding("gap")), std::string::npos) << r.output;

  start_bridge("bridge.mid_heads_batch");
  EXPECT_EQ(wait_bridge_exit(), base::kFailpointExitCode) << bridge_log();
  EXPECT_EQ(ledger_value("SELECT count(*) FROM fleet.signed_heads"), "0");

  start_bridge();
  ASSERT_TRUE(heads_shipped(2)) << bridge_log();
  ASSERT_TRUE(audit_shipped()) << bridge_log();
  stop_bridge();
  // Restarted with nothing new, and after one more turn: each head once.
  start_bridge();
  ASSERT_NO_FATAL_FAILURE(end_turn("turn", 3));
  ASSERT_TRUE(heads_shipped(3)) << bridge_log();
  ASSERT_TRUE(audit_shipped()) << bridge_log();
  const auto shipped = ledger_heads();
  const auto local = local_heads();
  ASSERT_EQ(shipped.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(shipped[i][2], local[i]);
  EXPECT_EQ(bridge_log().find("the ledger refused"), std::string::npos) << bridge_log();
  r = fleet_verify();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("3 signed heads: clean"), std::string::npos) << r.output;
}

// The signed heads are read over the socket by the actors that read the
// records: the bridge's uid (an approver) and root, never the agent's.
TEST_F(FleetHeadsTest, TheAgentsUidCannotCallAuditHeads) {
  ASSERT_NO_FATAL_FAILURE(end_turn("turn", 1));
  for (const std::string cmd : {"audit heads", "audit heads --after-size 0", "audit records"}) {
    RunResult r = agent(q(LEASECTL_PATH) + " --socket " + q(sock) + " " + cmd);
    EXPECT_EQ(r.exit_code, 1) << cmd << ": " << r.output;
    EXPECT_NE(r.output.find("forbidden"), std::string::npos) << cmd << ": " << r.output;
    EXPECT_EQ(r.output.find("\xe2\x80\x94 leasefs/"), std::string::npos) << cmd;
  }
  RunResult b = as_user(bridge_uid, bridge_gid,
                        q(LEASECTL_PATH) + " --socket " + q(sock) + " --json audit heads", base);
  ASSERT_EQ(b.exit_code, 0) << b.output;
  const json reply = json::parse(b.output, nullptr, false);
  ASSERT_TRUE(reply.is_object()) << b.output;
  const json heads = reply["result"].value("heads", json::array());
  ASSERT_EQ(heads.size(), 1u) << b.output;
  EXPECT_EQ(heads[0].value("checkpoint", ""), local_heads()[0]);
  // After its own size there is nothing; the limit is bounded.
  RunResult none = leasectl({"--json", "audit", "heads", "--after-size",
                             std::to_string(heads[0].value("size", uint64_t{0}))});
  EXPECT_EQ(json::parse(none.output, nullptr, false)["result"]["heads"].size(), 0u) << none.output;
  RunResult big = leasectl({"audit", "heads", "--limit", "1001"});
  EXPECT_EQ(big.exit_code, 1) << big.output;
  EXPECT_NE(big.output.find("'limit' must be between 1 and 1000"), std::string::npos) << big.output;
}

// A daemon with no key at its --signing-key path ends its turns unsigned: the
// ledger holds the turns and no head, and the verifier calls that silence.
class FleetNoKey : public FleetHeadsTest {
 protected:
  FleetNoKey() { make_key = false; }
};

TEST_F(FleetNoKey, TurnsThatEndedWithNoSignedHeadAreSilence) {
  start_bridge();
  ASSERT_EQ(leasectl({"turn"}).exit_code, 0);
  ASSERT_EQ(audit_events_when("head_unsigned", 1).size(), 1u);
  ASSERT_TRUE(audit_shipped()) << bridge_log();
  EXPECT_EQ(ledger_value("SELECT count(*) FROM fleet.signed_heads"), "0");
  RunResult r = fleet_verify();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(finding("silence") + "the turn that ended at record "), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace leasefs::test

// The fleet with signed turns, all real: FleetBridgeTest's ledger, daemon and
// bridge, the daemon started with --signing-key (a key made by `leasefs keygen`,
// or none at that path), and `leasectl fleet verify` run as the person alice
// with the daemon's verifier key.
#pragma once

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "signing/heads_file.hpp"
#include "tests/fleet/bridge_site.hpp"

namespace leasefs::test {

class FleetHeadsTest : public FleetBridgeTest {
 protected:
  void SetUp() override {
    ::mkdir(keys.c_str(), 0755);
    if (make_key) {
      RunResult r =
          run_argv({LEASEFS_BIN, "keygen", "--key", key}, RunOptions{.cwd = base, .timeout_s = 30});
      ASSERT_EQ(r.exit_code, 0) << r.output;
    }
    mount_options = {"--signing-key", key};
    ASSERT_NO_FATAL_FAILURE(FleetBridgeTest::SetUp());
    pgpass = base + "/pgpass";
    std::ofstream(pgpass) << "*:*:*:alice:" << ledger.passwords.at("alice") << "\n";
    ASSERT_EQ(::chmod(pgpass.c_str(), 0600), 0);
  }

  // The daemon's signed heads, each entry's exact text (read as root).
  std::vector<std::string> local_heads() {
    std::vector<std::string> out;
    for (const auto& e : signing::split_heads_file(read_text(heads_path)).entries) {
      out.push_back(e.note);
    }
    return out;
  }
  // `leasectl CMD` (turn, end-turn), waited for until the daemon holds `n` heads.
  void end_turn(const std::string& cmd, size_t n) {
    RunResult r = leasectl({cmd});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_TRUE(wait_until([&] { return local_heads().size() >= n; }, 30))
        << local_heads().size() << " heads after " << cmd;
    ASSERT_EQ(local_heads().size(), n);
    // Its "head_signed" record follows the head by a moment.
    ASSERT_EQ(audit_events_when("head_signed", n).size(), n);
  }
  // The ledger's signed heads, in order of size: {size, root_hash, checkpoint}.
  std::vector<std::vector<std::string>> ledger_heads() {
    fleet::PgResult r = ledger.pg.admin().exec(
        "SELECT size, root_hash, checkpoint FROM fleet.signed_heads ORDER BY size");
    std::vector<std::vector<std::string>> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back({r.text(i, 0), r.text(i, 1), r.text(i, 2)});
    return out;
  }
  bool heads_shipped(size_t n) {
    return ledger_says("SELECT count(*) FROM fleet.signed_heads", std::to_string(n));
  }
  // `leasectl fleet verify` as alice, with the daemon's verifier key (if it has one).
  RunResult fleet_verify() {
    std::string conninfo = ledger.pg.conninfo("alice", "");
    conninfo.erase(conninfo.find(" password="));
    std::vector<std::string> argv = {
        "env", "PGPASSFILE=" + pgpass, LEASECTL_PATH, "fleet", "--db", conninfo, "verify"};
    if (make_key) argv.insert(argv.end(), {"--key-file", key + ".pub"});
    return run_argv(argv, RunOptions{.cwd = base, .timeout_s = 60});
  }
  // The line fleet verify prints for the one chain when its first finding is `kind`.
  std::string finding(const std::string& kind) {
    return "machine_a:" + root + " (project " + project + "): " + kind + ": ";
  }

  bool make_key = true;
  std::string keys = base + "/keys";
  std::string key = keys + "/audit-signing.key";
  std::string heads_path = base + "/root/.longrun/signed_heads";
  std::string pgpass;
};

}  // namespace leasefs::test

// `leasectl fleet` as a person at the terminal, and `leasectl fleet verify`,
// against the real ledger: decisions go in as the person's own role, only where
// delegated, once; the verifier names the record or head that is wrong.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "base/sha256.hpp"
#include "signing/ed25519_key.hpp"
#include "signing/key_name.hpp"
#include "signing/signed_note.hpp"
#include "signing/tree_head.hpp"
#include "signing/verifier_key.hpp"
#include "tests/fleet/ledger_site.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;
constexpr const char* kPersonDigest =
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
constexpr const char* kPersonKeyName = "leasefs/testmachine";

class FleetPerson : public ::testing::Test {
 protected:
  void SetUp() override {
    site.enroll_machine("machine_a");
    site.enroll_person("alice");
    site.enroll_person("bob");
    project = site.delegate("alice", "machine_a", "/srv/a");
    dir = make_temp_dir("leasefs-person-");
    pgpass = dir + "/pgpass";
    {
      std::ofstream out(pgpass);
      for (const char* who : {"alice", "bob"})
        out << "*:*:*:" << who << ":" << site.passwords[who] << "\n";
    }
    ::chmod(pgpass.c_str(), 0600);
  }

  std::string file_request(const std::string& local_id, const std::string& paths,
                           const std::string& reason = "because") {
    fleet::PgConnection m = site.as("machine_a");
    return m
        .exec(
            "INSERT INTO fleet.requests (project_id, local_id, task_id, turn, paths, ops, reason,"
            " created_ms, digest) VALUES ($1, $2, 'T1', 3, $3::jsonb, '[\"write\"]', $4, 1, $5)"
            " RETURNING id",
            {project, local_id, paths, reason, kPersonDigest})
        .text(0, 0);
  }

  // leasectl fleet ARGS as `who`, the password from a pgpass file, not the command line.
  RunResult leasectl(const std::string& who, std::vector<std::string> args) {
    std::string conninfo = site.pg.conninfo(who, "");
    conninfo.erase(conninfo.find(" password="));
    std::vector<std::string> argv = {
        "env", "PGPASSFILE=" + pgpass, LEASECTL_PATH, "fleet", "--db", conninfo};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_argv(argv);
  }

  std::string count(const std::string& sql) { return site.pg.admin().exec(sql).text(0, 0); }

  LedgerSite site;
  std::string project, dir, pgpass;
};

TEST_F(FleetPerson, ADelegatedPersonApprovesAndRejectsOnceEach) {
  const std::string r1 = file_request("R_0001", "[\"src/**\"]");
  const std::string r2 = file_request("R_0002", "[\"docs/x\"]");
  RunResult list = leasectl("alice", {"requests"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("request " + r1 + "  machine_a:/srv/a  task T1  turn 3"),
            std::string::npos)
      << list.output;
  RunResult ok = leasectl("alice", {"approve", r1, "--reason", "fine"});
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  ASSERT_EQ(leasectl("alice", {"reject", r2}).exit_code, 0);
  fleet::PgResult d = site.pg.admin().exec(
      "SELECT request_id, decision, decided_by, digest, reason FROM fleet.decisions ORDER BY id");
  ASSERT_EQ(d.rows(), 2);
  EXPECT_EQ(d.text(0, 0), r1);
  EXPECT_EQ(d.text(0, 1), "approve");
  EXPECT_EQ(d.text(0, 2), "alice");
  EXPECT_EQ(d.text(0, 3), kPersonDigest);
  EXPECT_EQ(d.text(0, 4), "fine");
  EXPECT_EQ(d.text(1, 1), "reject");
  // A second decision fails, and says who decided first.
  RunResult again = leasectl("alice", {"reject", r1});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.output.find("decided already: approve by alice"), std::string::npos)
      << again.output;
  EXPECT_EQ(count("SELECT count(*) FROM fleet.decisions"), "2");
  // Decided requests are no longer listed.
  EXPECT_NE(leasectl("alice", {}).output.find("no pending request"), std::string::npos);
}

TEST_F(FleetPerson, APersonOutsideTheDelegationNeitherSeesNorDecides) {
  const std::string r1 = file_request("R_0001", "[\"src/**\"]", "secret plan");
  RunResult list = leasectl("bob", {});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_EQ(list.output.find("secret plan"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("no pending request on the projects delegated to bob"),
            std::string::npos)
      << list.output;
  RunResult decide = leasectl("bob", {"approve", r1});
  EXPECT_EQ(decide.exit_code, 1);
  EXPECT_NE(decide.output.find("not one you may decide as bob"), std::string::npos)
      << decide.output;
  EXPECT_EQ(count("SELECT count(*) FROM fleet.decisions"), "0");
  // The batch sees nothing either.
  RunResult batch = leasectl("bob", {"approve", "--project", "/srv/a"});
  EXPECT_NE(batch.output.find("approved 0 request(s)"), std::string::npos) << batch.output;
  EXPECT_EQ(count("SELECT count(*) FROM fleet.decisions"), "0");
}

TEST_F(FleetPerson, ABatchGivesOneDecisionRowPerRequest) {
  const std::string a = file_request("R_0001", "[\"src/a.c\"]");
  const std::string b = file_request("R_0002", "[\"src/lib/**\", \"src/b.h\"]");
  const std::string c = file_request("R_0003", "[\"srcx/c\"]");
  const std::string d = file_request("R_0004", "[\"src/d\", \"docs/e\"]");
  RunResult batch = leasectl("alice", {"approve", "--project", "/srv/a", "--path-prefix", "src/"});
  ASSERT_EQ(batch.exit_code, 0) << batch.output;
  EXPECT_NE(batch.output.find("approved 2 request(s)"), std::string::npos) << batch.output;
  fleet::PgResult rows = site.pg.admin().exec(
      "SELECT request_id, decided_by FROM fleet.decisions ORDER BY request_id");
  ASSERT_EQ(rows.rows(), 2);
  EXPECT_EQ(rows.text(0, 0), a);
  EXPECT_EQ(rows.text(1, 0), b);
  EXPECT_EQ(rows.text(0, 1), "alice");
}

TEST_F(FleetPerson, AReasonWithEscapeSequencesPrintsInert) {
  file_request("R_0001", "[\"src/a\"]", "ok\x1b]0;owned\x07\nrequest 99  fake\r\x1b[2J");
  RunResult list = leasectl("alice", {});
  ASSERT_EQ(list.exit_code, 0);
  EXPECT_EQ(list.output.find('\x1b'), std::string::npos);
  EXPECT_EQ(list.output.find('\r'), std::string::npos);
  EXPECT_EQ(list.output.find("\nrequest 99"), std::string::npos);
  EXPECT_NE(list.output.find("reason: ok\\x1b]0;owned\\x07\\nrequest 99  fake\\r\\x1b[2J"),
            std::string::npos);
}

TEST_F(FleetPerson, APasswordOnTheCommandLineIsRefused) {
  std::vector<std::string> argv = {LEASECTL_PATH, "fleet", "--db",
                                   site.pg.conninfo("alice", site.passwords["alice"])};
  RunResult r = run_argv(argv);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("holds a password"), std::string::npos);
}

// A chain as the daemon writes it (memory/audit_log.cpp's canonical form), shipped
// as machine_a, with the signed head of its turn's end.
class FleetVerify : public FleetPerson {
 protected:
  void SetUp() override {
    FleetPerson::SetUp();
    ship({{"type", "task_created"}, {"task_id", "T1"}});
    ship({{"type", "turn"}, {"task_id", "T1"}});
    ship({{"type", "head_signed"}, {"size", 2}});
    ship({{"type", "decision"}, {"reason", "alpha"}});
    sign(2, hashes[1], key);
    key_file = dir + "/machine_a.pub";
    std::ofstream(key_file) << signing::VerifierKey::of(kPersonKeyName, key.public_key()).text()
                            << "\n";
  }
  void ship(const json& event) {
    const uint64_t seq = hashes.size() + 1;
    const std::string prev = hashes.empty() ? std::string(64, '0') : hashes.back();
    const json body = {{"seq", seq}, {"ts_ms", 1000 + seq}, {"event", event}, {"prev", prev}};
    const std::string hash = base::sha256_hex(base::json_text(body));
    json line = body;
    line["hash"] = hash;
    site.as("machine_a")
        .exec(
            "INSERT INTO fleet.audit_records (project_id, seq, ts_ms, prev, hash, line, event)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)",
            {project, std::to_string(seq), std::to_string(1000 + seq), prev, hash,
             base::json_text(line), event.dump()});
    hashes.push_back(hash);
  }
  void sign(uint64_t size, const std::string& hash, const signing::Ed25519Key& by) {
    const std::string text = signing::tree_head_text(
        {signing::log_origin(kPersonKeyName, "/srv/a"), size, *signing::hash_bytes(hash)});
    site.as("machine_a")
        .exec(
            "INSERT INTO fleet.signed_heads (project_id, size, root_hash, checkpoint)"
            " VALUES ($1, $2, $3, $4)",
            {project, std::to_string(size), hash, signing::sign_note(text, by, kPersonKeyName)});
  }
  RunResult verify() { return leasectl("alice", {"verify", "--key-file", key_file}); }

  signing::Ed25519Key key = signing::Ed25519Key::generate();
  std::vector<std::string> hashes;
  std::string key_file;
};

TEST_F(FleetVerify, AShippedChainIsClean) {
  RunResult r = verify();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 chains, 4 records, 1 signed heads: clean"), std::string::npos)
      << r.output;
}

TEST_F(FleetVerify, OneChangedByteOfAShippedRecordIsNamed) {
  site.pg.admin().exec(
      "UPDATE fleet.audit_records SET line = replace(line, 'alpha', 'alphb') WHERE seq = 4");
  RunResult r = verify();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("machine_a:/srv/a (project " + project +
                          "): edited: record 4: its content does not match its hash"),
            std::string::npos)
      << r.output;
}

TEST_F(FleetVerify, AMissingRecordIsAGap) {
  site.pg.admin().exec("DELETE FROM fleet.audit_records WHERE seq = 2");
  RunResult r = verify();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("gap: record 2 is missing"), std::string::npos) << r.output;
}

TEST_F(FleetVerify, AForgedHeadIsABadSignature) {
  sign(4, hashes[3], signing::Ed25519Key::generate());  // same name, another key
  RunResult r = verify();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("bad_signature"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace leasefs::test

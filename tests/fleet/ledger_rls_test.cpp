// Row-level security of the ledger, each case against the real server: what a
// machine's role and a person's role may read and write is the engine's rule.
#include <gtest/gtest.h>

#include "tests/fleet/ledger_site.hpp"

namespace leasefs::test {
namespace {

constexpr const char* kDigest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
constexpr const char* kInsertRequest =
    "INSERT INTO fleet.requests (project_id, local_id, task_id, turn, paths, ops, reason,"
    " created_ms, digest) VALUES ($1, $2, 'T_1', 3, '[\"src/**\"]', '[]', 'fix it', 0, $3)"
    " RETURNING id";
constexpr const char* kLocalProject = "INSERT INTO fleet.projects (root) VALUES ($1) RETURNING id";

class FleetLedgerRls : public ::testing::Test {
 protected:
  void SetUp() override {
    site.enroll_machine("machine_a");
    site.enroll_machine("machine_b");
    site.enroll_person("alice");
    site.enroll_person("bob");
    project_a = site.delegate("alice", "machine_a", "/srv/a");
    project_b = site.delegate("bob", "machine_b", "/srv/b");
    fleet::PgConnection a = site.as("machine_a");
    request_a = a.exec(kInsertRequest, {project_a, "R_0001", kDigest}).text(0, 0);
    fleet::PgConnection b = site.as("machine_b");
    request_b = b.exec(kInsertRequest, {project_b, "R_0001", kDigest}).text(0, 0);
  }
  LedgerSite site;
  std::string project_a, project_b, request_a, request_b;
};

TEST_F(FleetLedgerRls, MachineReadsOnlyItsOwnRows) {
  fleet::PgConnection a = site.as("machine_a");
  fleet::PgResult rows = a.exec("SELECT id, machine FROM fleet.requests ORDER BY id");
  ASSERT_EQ(rows.rows(), 1);
  EXPECT_EQ(rows.text(0, 0), request_a);
  EXPECT_EQ(rows.text(0, 1), "machine_a");
  EXPECT_EQ(a.exec("SELECT count(*) FROM fleet.projects WHERE id = $1", {project_b}).text(0, 0),
            "0");
  EXPECT_EQ(a.exec("SELECT count(*) FROM fleet.machines").text(0, 0), "1");
  // Machine B's rows are there: the administrator sees both.
  EXPECT_EQ(site.pg.admin().exec("SELECT count(*) FROM fleet.requests").text(0, 0), "2");
}

TEST_F(FleetLedgerRls, MachineCannotInsertARequestAsAnotherMachine) {
  fleet::PgConnection a = site.as("machine_a");
  // Naming machine B outright, or filing under B's project.
  EXPECT_EQ(sqlstate_of([&] {
              a.exec(
                  "INSERT INTO fleet.requests (machine, project_id, local_id, task_id, turn, paths,"
                  " ops, reason, created_ms, digest) VALUES ('machine_b', $1, 'R_0009', 'T_1', 3,"
                  " '[]', '[]', 'x', 0, $2)",
                  {project_b, kDigest});
            }),
            "42501");
  EXPECT_EQ(sqlstate_of([&] { a.exec(kInsertRequest, {project_b, "R_0009", kDigest}); }), "42501");
  EXPECT_EQ(sqlstate_of([&] {
              a.exec("INSERT INTO fleet.projects (machine, root) VALUES ('machine_b', '/x')");
            }),
            "42501");
  EXPECT_EQ(site.pg.admin().exec("SELECT count(*) FROM fleet.requests").text(0, 0), "2");
}

TEST_F(FleetLedgerRls, MachineCanNeverInsertADecision) {
  fleet::PgConnection a = site.as("machine_a");
  for (const std::string& request : {request_a, request_b}) {
    EXPECT_EQ(sqlstate_of([&] {
                a.exec(
                    "INSERT INTO fleet.decisions (request_id, decision, decided_by, digest)"
                    " VALUES ($1, 'approve', 'alice', $2)",
                    {request, kDigest});
              }),
              "42501")
        << request;
  }
  EXPECT_EQ(site.pg.admin().exec("SELECT count(*) FROM fleet.decisions").text(0, 0), "0");
}

TEST_F(FleetLedgerRls, PersonDecidesOnlyWhereDelegatedAndOnlyAsItself) {
  fleet::PgConnection bob = site.as("bob");
  // Bob reads nothing of machine A's project and may not decide there.
  EXPECT_EQ(bob.exec("SELECT count(*) FROM fleet.requests WHERE id = $1", {request_a}).text(0, 0),
            "0");
  EXPECT_EQ(sqlstate_of([&] {
              bob.exec(
                  "INSERT INTO fleet.decisions (request_id, decision, digest) VALUES ($1,"
                  " 'approve', $2)",
                  {request_a, kDigest});
            }),
            "42501");
  // Alice, delegated, may not sign as Bob.
  fleet::PgConnection alice = site.as("alice");
  EXPECT_EQ(sqlstate_of([&] {
              alice.exec(
                  "INSERT INTO fleet.decisions (request_id, decision, decided_by, digest) VALUES"
                  " ($1, 'approve', 'bob', $2)",
                  {request_a, kDigest});
            }),
            "42501");
  alice.exec(
      "INSERT INTO fleet.decisions (request_id, decision, digest) VALUES ($1, 'approve', $2)",
      {request_a, kDigest});
  fleet::PgResult d = site.pg.admin().exec("SELECT request_id, decided_by FROM fleet.decisions");
  ASSERT_EQ(d.rows(), 1);
  EXPECT_EQ(d.text(0, 0), request_a);
  EXPECT_EQ(d.text(0, 1), "alice");
}

TEST_F(FleetLedgerRls, TheFirstDecisionWinsASecondFails) {
  fleet::PgConnection alice = site.as("alice");
  alice.exec(
      "INSERT INTO fleet.decisions (request_id, decision, digest) VALUES ($1, 'approve', $2)",
      {request_a, kDigest});
  site.enroll_person("carol");
  site.delegate("carol", "machine_a", "/srv/a");
  fleet::PgConnection carol = site.as("carol");
  EXPECT_EQ(sqlstate_of([&] {
              carol.exec(
                  "INSERT INTO fleet.decisions (request_id, decision, digest) VALUES ($1, "
                  "'reject', $2)",
                  {request_a, kDigest});
            }),
            "23505");  // unique_violation
  fleet::PgResult d = site.pg.admin().exec("SELECT decision, decided_by FROM fleet.decisions");
  ASSERT_EQ(d.rows(), 1);
  EXPECT_EQ(d.text(0, 0), "approve");
  EXPECT_EQ(d.text(0, 1), "alice");
}

TEST_F(FleetLedgerRls, ADecisionNotifiesOnlyItsMachineWithAnEmptyPayload) {
  fleet::PgConnection a = site.as("machine_a");
  fleet::PgConnection b = site.as("machine_b");
  EXPECT_EQ(a.exec("SELECT fleet.listen_for_decisions()").text(0, 0), "fleet_machine_machine_a");
  b.exec("SELECT fleet.listen_for_decisions()");
  // A person cannot listen as a machine: the function is the machines'.
  fleet::PgConnection alice = site.as("alice");
  EXPECT_EQ(sqlstate_of([&] { alice.exec("SELECT fleet.listen_for_decisions()"); }), "42501");
  alice.exec(
      "INSERT INTO fleet.decisions (request_id, decision, digest) VALUES ($1, 'approve', $2)",
      {request_a, kDigest});
  bool woke = false;
  for (int i = 0; i < 200 && !woke; ++i) {
    woke = a.take_notifications();
    if (!woke) ::usleep(10000);
  }
  EXPECT_TRUE(woke) << "machine A's bridge was not notified";
  EXPECT_FALSE(b.take_notifications()) << "machine B was notified of A's decision";
}

TEST_F(FleetLedgerRls, AuditRecordsAreTakenOnlyInChainOrder) {
  fleet::PgConnection a = site.as("machine_a");
  const std::string zero(64, '0'), h1(64, '1'), h2(64, '2');
  const char* insert =
      "INSERT INTO fleet.audit_records (project_id, seq, ts_ms, prev, hash, line, event)"
      " VALUES ($1, $2, 0, $3, $4, '{}', '{}')";
  EXPECT_EQ(sqlstate_of([&] { a.exec(insert, {project_a, "2", zero, h1}); }), "23514");  // a gap
  a.exec(insert, {project_a, "1", zero, h1});
  EXPECT_EQ(sqlstate_of([&] { a.exec(insert, {project_a, "1", zero, h1}); }), "23514");  // again
  EXPECT_EQ(sqlstate_of([&] { a.exec(insert, {project_a, "2", zero, h2}); }), "23514");  // a fork
  a.exec(insert, {project_a, "2", h1, h2});
  EXPECT_EQ(a.exec("SELECT seq, hash FROM fleet.audit_heads WHERE project_id = $1", {project_a})
                .text(0, 0),
            "2");
  // Nor as machine B, into A's project.
  fleet::PgConnection b = site.as("machine_b");
  EXPECT_EQ(sqlstate_of([&] { b.exec(insert, {project_a, "3", h2, h1}); }), "42501");
  EXPECT_EQ(b.exec("SELECT count(*) FROM fleet.audit_records").text(0, 0), "0");
}

TEST_F(FleetLedgerRls, BadInputIsRefusedClearly) {
  fleet::PgConnection a = site.as("machine_a");
  // A malformed row: a digest that is no SHA-256, paths that are no array.
  EXPECT_EQ(sqlstate_of([&] {
              a.exec(kInsertRequest, {project_a, "R_0002", "not-a-digest"});
            }),
            "23514");
  EXPECT_EQ(sqlstate_of([&] {
              a.exec(kInsertRequest, {project_a, "R 0002; --", kDigest});
            }),
            "23514");
  // A decision for a request that never was.
  fleet::PgConnection alice = site.as("alice");
  EXPECT_EQ(sqlstate_of([&] {
              alice.exec(
                  "INSERT INTO fleet.decisions (request_id, decision, digest) VALUES (999999,"
                  " 'approve', $1)",
                  {kDigest});
            }),
            "42501");
  // A machine nobody enrolled cannot be named, nor a role name that is no word.
  EXPECT_EQ(sqlstate_of([&] {
              site.pg.admin().exec("SELECT fleet.delegate('alice', 'machine_z', '/srv/z')");
            }),
            "23503");
  EXPECT_EQ(sqlstate_of([&] {
              site.pg.admin().exec("SELECT fleet.enroll_machine($1, 'pw')", {"x\"; DROP ROLE y"});
            }),
            "23514");
}

TEST_F(FleetLedgerRls, MigratingAgainChangesNothing) {
  fleet::PgConnection admin = site.pg.admin();
  EXPECT_TRUE(fleet::migrate(admin, fleet::parse_migrations(fleet::ledger_schema_text())).empty());
  EXPECT_EQ(admin.exec("SELECT max(version) FROM fleet.migrations").text(0, 0),
            std::to_string(fleet::parse_migrations(fleet::ledger_schema_text()).size()));
}

}  // namespace
}  // namespace leasefs::test

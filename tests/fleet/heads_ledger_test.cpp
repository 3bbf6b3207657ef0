// The ledger's signed heads under row-level security, against the real server:
// a machine's role ships heads for its own projects only, can change none once
// shipped, and ships one per size.
#include <gtest/gtest.h>

#include "tests/fleet/ledger_site.hpp"

namespace leasefs::test {
namespace {

constexpr const char* kHash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
constexpr const char* kInsertHead =
    "INSERT INTO fleet.signed_heads (project_id, size, root_hash, checkpoint)"
    " VALUES ($1, $2, $3, 'a checkpoint')";

class FleetHeadsLedger : public ::testing::Test {
 protected:
  void SetUp() override {
    site.enroll_machine("machine_a");
    site.enroll_machine("machine_b");
    site.enroll_person("alice");
    site.enroll_person("bob");
    project_a = site.delegate("alice", "machine_a", "/srv/a");
    project_b = site.delegate("bob", "machine_b", "/srv/b");
  }
  std::string count(const std::string& sql) { return site.pg.admin().exec(sql).text(0, 0); }

  LedgerSite site;
  std::string project_a, project_b;
};

TEST_F(FleetHeadsLedger, AMachineShipsHeadsOnlyForItsOwnProjectsAndChangesNone) {
  fleet::PgConnection a = site.as("machine_a");
  ASSERT_EQ(sqlstate_of([&] { a.exec(kInsertHead, {project_a, "3", kHash}); }), "");
  // Another machine's project, and another machine named outright.
  EXPECT_EQ(sqlstate_of([&] { a.exec(kInsertHead, {project_b, "3", kHash}); }), "42501");
  EXPECT_EQ(sqlstate_of([&] {
              a.exec(
                  "INSERT INTO fleet.signed_heads (machine, project_id, size, root_hash,"
                  " checkpoint) VALUES ('machine_b', $1, 4, $2, 'x')",
                  {project_b, kHash});
            }),
            "42501");
  EXPECT_EQ(sqlstate_of([&] {
              a.exec(
                  "INSERT INTO fleet.signed_heads (machine, project_id, size, root_hash,"
                  " checkpoint) VALUES ('machine_b', $1, 4, $2, 'x')",
                  {project_a, kHash});
            }),
            "42501");
  // A shipped head stays as shipped: no update, no delete, one per size.
  EXPECT_EQ(sqlstate_of([&] { a.exec("UPDATE fleet.signed_heads SET checkpoint = 'forged'"); }),
            "42501");
  EXPECT_EQ(sqlstate_of([&] { a.exec("DELETE FROM fleet.signed_heads"); }), "42501");
  EXPECT_EQ(sqlstate_of([&] { a.exec(kInsertHead, {project_a, "3", kHash}); }), "23505");
  EXPECT_EQ(count("SELECT count(*) FROM fleet.signed_heads"), "1");
  EXPECT_EQ(count("SELECT checkpoint FROM fleet.signed_heads"), "a checkpoint");
  // Machine B and bob, outside the project, do not see it; alice does.
  EXPECT_EQ(site.as("machine_b").exec("SELECT count(*) FROM fleet.signed_heads").text(0, 0), "0");
  EXPECT_EQ(site.as("bob").exec("SELECT count(*) FROM fleet.signed_heads").text(0, 0), "0");
  EXPECT_EQ(site.as("alice").exec("SELECT count(*) FROM fleet.signed_heads").text(0, 0), "1");
}

}  // namespace
}  // namespace leasefs::test

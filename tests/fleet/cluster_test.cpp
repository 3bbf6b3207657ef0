// The fixture itself: a real server, reachable only through its socket
// directory, gone with its directory once the fixture is.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include "tests/fleet/pg_cluster.hpp"

namespace leasefs::test {
namespace {

TEST(FleetCluster, ListensOnlyOnItsSocketAndIsGoneAfter) {
  std::string base;
  pid_t master = 0;
  {
    PgCluster pg;
    base = pg.base();
    master = pg.postmaster_pid();
    ASSERT_GT(master, 0);
    fleet::PgConnection db = pg.admin();
    EXPECT_EQ(db.exec("SHOW listen_addresses").text(0, 0), "");
    EXPECT_EQ(db.exec("SELECT $1::int + 1", {"41"}).text(0, 0), "42");
    struct stat st {};
    EXPECT_EQ(::stat((pg.socket_dir() + "/.s.PGSQL.5432").c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
  }
  struct stat st {};
  EXPECT_NE(::stat(base.c_str(), &st), 0) << base << " is still there";
  EXPECT_FALSE(PgCluster::running(master)) << "the postmaster still runs";
}

TEST(FleetCluster, AWrongPasswordIsRefused) {
  PgCluster pg;
  try {
    fleet::PgConnection::open(pg.conninfo("fleet_admin", "not-the-password"));
    ADD_FAILURE() << "connected with a wrong password";
  } catch (const fleet::PgError& e) {
    EXPECT_NE(std::string(e.what()).find("password authentication failed"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace leasefs::test

// A cluster with the ledger's schema loaded and named actors enrolled: machines
// (the bridges' roles) and people (approvers), each with its own password.
#pragma once

#include <map>
#include <string>

#include "tests/fleet/pg_cluster.hpp"

namespace leasefs::test {

class LedgerSite {
 public:
  LedgerSite() { pg.load_schema(); }

  std::string enroll_machine(const std::string& name) {
    const std::string password = random_password();
    pg.admin().exec("SELECT fleet.enroll_machine($1, $2)", {name, password});
    passwords[name] = password;
    return pg.conninfo(name, password);
  }
  std::string enroll_person(const std::string& name) {
    const std::string password = random_password();
    pg.admin().exec("SELECT fleet.enroll_person($1, $2)", {name, password});
    passwords[name] = password;
    return pg.conninfo(name, password);
  }
  // The project id of ROOT on MACHINE, delegated to PERSON.
  std::string delegate(const std::string& person, const std::string& machine,
                       const std::string& root) {
    return pg.admin().exec("SELECT fleet.delegate($1, $2, $3)", {person, machine, root}).text(0, 0);
  }
  fleet::PgConnection as(const std::string& role) {
    return fleet::PgConnection::open(pg.conninfo(role, passwords.at(role)));
  }

  PgCluster pg;
  std::map<std::string, std::string> passwords;
};

// The SQLSTATE a statement fails with, "" when it succeeds.
template <typename Fn>
std::string sqlstate_of(Fn&& fn) {
  try {
    fn();
  } catch (const fleet::PgError& e) {
    return e.sqlstate().empty() ? "no-sqlstate: " + std::string(e.what()) : e.sqlstate();
  }
  return "";
}

}  // namespace leasefs::test

// `leasectl fleet console`: the console pointed at the fleet's ledger instead of
// this machine's daemons. It logs in under the person's own database role (as
// `leasectl fleet` does) and shows what that role may see: the projects, their
// pending requests and the refusals in their shipped audit; a person approves
// or rejects there through fleet/person_desk, so the ledger's row-level
// security and its first-decision-wins key decide, not this page.
#pragma once

#include <string>

namespace leasefs::leasectl {

struct FleetConsoleOptions {
  std::string listen = "127.0.0.1:0";  // loopback only; port 0 picks a free one
  std::string db;                      // libpq connection string, without a password
};

// Logs in (exit 2 for a password in --db, 3 when the ledger does not answer, 1
// when it refuses the login), prints the URL with its token as the first line
// of stdout, then serves until SIGINT or SIGTERM.
int run_fleet_console(const FleetConsoleOptions& options);

}  // namespace leasefs::leasectl

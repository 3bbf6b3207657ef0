// How a person's tools log in to the ledger: as the person's own role, from a
// libpq connection string (--db) or, when there is none, from what libpq reads
// itself (PGSERVICE, PGHOST, PGUSER, ~/.pgpass, PGPASSFILE...). A password in
// the connection string is refused: on a command line, every user of the
// machine could read it in /proc.
#pragma once

#include <stdexcept>
#include <string>

#include "fleet/pg_connection.hpp"

namespace leasefs::fleet {

class LoginRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws LoginRefused for a string libpq cannot parse or one holding a
// password, PgError when the server does not take the login.
PgConnection open_as_person(const std::string& conninfo);

}  // namespace leasefs::fleet

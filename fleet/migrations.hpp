// The ledger's schema (fleet/schema/ledger.sql, compiled in) cut into its
// numbered migrations, and applying those a database does not hold yet.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fleet/pg_connection.hpp"

namespace leasefs::fleet {

struct Migration {
  int version = 0;
  std::string name;
  std::string sql;
};

// The text of fleet/schema/ledger.sql.
std::string_view ledger_schema_text();

// The migrations of a schema text, in order: each begins at a line
// "-- migration: N name"; numbers must run 1, 2, 3... Throws std::runtime_error.
std::vector<Migration> parse_migrations(std::string_view schema);

// Applies, each in one transaction under an advisory lock (two bridges or
// administrators at once do it once), every migration newer than what
// fleet.migrations holds. Returns the versions applied. Throws PgError.
std::vector<int> migrate(PgConnection& db, const std::vector<Migration>& migrations);

}  // namespace leasefs::fleet

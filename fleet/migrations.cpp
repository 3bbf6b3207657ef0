#include "fleet/migrations.hpp"

#include <stdexcept>

namespace leasefs::fleet {

namespace {

constexpr std::string_view kMarker = "-- migration: ";
// Any fixed number: the lock only keeps two migrating sessions apart.
constexpr const char* kMigrationLock = "4242000042";

}  // namespace

std::vector<Migration> parse_migrations(std::string_view schema) {
  std::vector<Migration> out;
  size_t pos = 0;
  while (pos < schema.size()) {
    size_t end = schema.find('\n', pos);
    if (end == std::string_view::npos) end = schema.size();
    std::string_view line = schema.substr(pos, end - pos);
    if (line.substr(0, kMarker.size()) == kMarker) {
      std::string_view rest = line.substr(kMarker.size());
      size_t space = rest.find(' ');
      Migration m;
      try {
        m.version = std::stoi(std::string(rest.substr(0, space)));
      } catch (const std::exception&) {
        throw std::runtime_error("ledger schema: a migration line without a number: " +
                                 std::string(line));
      }
      m.name = space == std::string_view::npos ? "" : std::string(rest.substr(space + 1));
      if (m.version != static_cast<int>(out.size()) + 1) {
        throw std::runtime_error("ledger schema: migration " + std::to_string(m.version) +
                                 " is out of order (expected " + std::to_string(out.size() + 1) +
                                 ")");
      }
      out.push_back(std::move(m));
    } else if (!out.empty()) {
      out.back().sql.append(line).push_back('\n');
    }
    pos = end + 1;
  }
  if (out.empty()) throw std::runtime_error("ledger schema: no migration found");
  return out;
}

std::vector<int> migrate(PgConnection& db, const std::vector<Migration>& migrations) {
  std::vector<int> applied;
  db.transaction([&] {
    db.exec("SELECT pg_advisory_xact_lock($1::bigint)", {kMigrationLock});
    db.exec("CREATE SCHEMA IF NOT EXISTS fleet");
    db.exec(
        "CREATE TABLE IF NOT EXISTS fleet.migrations ("
        " version integer PRIMARY KEY, name text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())");
    PgResult held = db.exec("SELECT coalesce(max(version), 0) FROM fleet.migrations");
    const long long have = held.integer(0, 0);
    if (have > static_cast<long long>(migrations.size())) {
      throw PgError("the ledger holds schema version " + std::to_string(have) +
                        ", newer than this program's " + std::to_string(migrations.size()),
                    "");
    }
    for (const Migration& m : migrations) {
      if (m.version <= have) continue;
      db.exec_script(m.sql, std::chrono::seconds(60));
      db.exec("INSERT INTO fleet.migrations (version, name) VALUES ($1, $2)",
              {std::to_string(m.version), m.name});
      applied.push_back(m.version);
    }
  });
  return applied;
}

}  // namespace leasefs::fleet

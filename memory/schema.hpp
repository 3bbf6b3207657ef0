// The schema of <root>/.longrun/memory.db and its migrations, in one place.
// Every component (memory store, ledger, idempotency store, audit anchor) opens
// its connection through open_database(), so the file is always migrated to the
// version this code expects before it is used.
#pragma once

#include <string>

#include "memory/sqlite_db.hpp"

namespace leasefs::memory {

// The schema version this code writes and understands.
int schema_version_latest();

// Reads the schema version of an open database (0 for an empty one).
int schema_version(SqliteDb& db);

// Brings the database up to schema_version_latest(). Safe when several
// connections migrate the same file at once (runs under BEGIN IMMEDIATE).
// Throws MemoryError for a newer schema than this code knows, or for a
// read-only database that would need a migration.
void migrate(SqliteDb& db);

// Opens the database at path and migrates it.
SqliteDb open_database(const std::string& path, SqliteDb::Options options = {});

}  // namespace leasefs::memory

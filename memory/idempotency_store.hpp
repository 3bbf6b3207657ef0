// Replies remembered by idempotency key, so that a retried control command
// (same key) gets the first reply instead of running twice. Kept in memory.db,
// so it survives a daemon restart.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "memory/sqlite_db.hpp"

namespace leasefs::memory {

struct StoredReply {
  std::string command;  // the command the key was first used with
  nlohmann::json reply;
  bool command_matches = true;  // false when looked up for a different command
};

class IdempotencyStore {
 public:
  // Opens (and migrates) the database at db_path. Throws MemoryError.
  explicit IdempotencyStore(const std::string& db_path)
      : IdempotencyStore(db_path, SqliteDb::Options{}) {}
  IdempotencyStore(const std::string& db_path, SqliteDb::Options options);

  // The reply remembered under key, whatever command it was for.
  std::optional<nlohmann::json> lookup(std::string_view key);

  // The reply remembered under key, with command_matches telling whether the
  // key was first used for this command (a reused key is the caller's error).
  std::optional<StoredReply> lookup_for(std::string_view key, std::string_view command);

  // Remembers the reply for key. The first reply stays: remembering a key
  // again changes nothing.
  void remember(std::string_view key, std::string_view command, const nlohmann::json& reply);

 private:
  std::mutex mutex_;  // guards db_
  SqliteDb db_;
};

}  // namespace leasefs::memory

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
};

class IdempotencyStore {
 public:
  // Opens (and migrates) the database at db_path. Throws MemoryError.
  explicit IdempotencyStore(const std::string& db_path)
      : IdempotencyStore(db_path, SqliteDb::Options{}) {}
  IdempotencyStore(const std::string& db_path, SqliteDb::Options options);

  // The reply remembered under key and the command it was for (a key reused for
  // another command is the caller's error to report).
  std::optional<StoredReply> lookup(std::string_view key);

  // Remembers the reply for key. The first reply stays: remembering a key
  // again changes nothing.
  void remember(std::string_view key, std::string_view command, const nlohmann::json& reply);

 private:
  std::mutex mutex_;  // guards db_
  SqliteDb db_;
};

}  // namespace leasefs::memory

#include "memory/idempotency_store.hpp"

#include "base/clock.hpp"
#include "base/json_text.hpp"
#include "memory/memory_error.hpp"
#include "memory/schema.hpp"

namespace leasefs::memory {

IdempotencyStore::IdempotencyStore(const std::string& db_path, SqliteDb::Options options)
    : db_(open_database(db_path, options)) {}

std::optional<StoredReply> IdempotencyStore::lookup(std::string_view key) {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare("SELECT command, reply_json FROM idempotency WHERE key = ?");
  stmt.bind(1, key);
  if (!stmt.step()) return std::nullopt;
  StoredReply stored;
  stored.command = stmt.column_text(0);
  stored.reply = nlohmann::json::parse(stmt.column_text(1), nullptr, false);
  if (stored.reply.is_discarded()) {
    throw MemoryError("idempotency: stored reply for key '" + std::string(key) + "' in " +
                      db_.path() + " is not JSON");
  }
  return stored;
}

void IdempotencyStore::remember(std::string_view key, std::string_view command,
                                const nlohmann::json& reply) {
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare(
      "INSERT INTO idempotency (key, command, reply_json, created_ms) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (key) DO NOTHING");
  stmt.bind_all(key, command, base::json_text(reply), base::now_ms());
  stmt.run();
}

}  // namespace leasefs::memory

// The control plane's reply memo (control::ReplyMemo) kept in memory.db's
// idempotency table, so a retried request is answered once across restarts.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "control/commands.hpp"
#include "memory/idempotency_store.hpp"

namespace leasefs::daemon {

// Stores {"request_hash":..., "reply":...} as the reply of a key. A reply stored
// before fingerprints existed has no hash and so never matches: it is refused as
// a conflict rather than replayed to a request it may not have been for.
class StoreMemo final : public control::ReplyMemo {
 public:
  explicit StoreMemo(memory::IdempotencyStore& store) : store_(store) {}
  std::optional<Entry> lookup(const std::string& key) override {
    auto stored = store_.lookup(key);
    if (!stored) return std::nullopt;
    nlohmann::json& body = stored->reply;
    if (body.is_object() && body.contains("reply") && body.contains("request_hash") &&
        body["request_hash"].is_string()) {
      return Entry{stored->command, body["request_hash"].get<std::string>(),
                   std::move(body["reply"])};
    }
    return Entry{stored->command, std::string(), std::move(body)};
  }
  void remember(const std::string& key, const std::string& command, const std::string& request_hash,
                const nlohmann::json& reply) override {
    store_.remember(key, command, nlohmann::json{{"request_hash", request_hash}, {"reply", reply}});
  }

 private:
  memory::IdempotencyStore& store_;
};

}  // namespace leasefs::daemon

// The digest that binds a central decision to one request: SHA-256 over the
// canonical JSON of what the person was shown (nlohmann's dump() of an object
// with exactly these keys; its keys are sorted, so the bytes are deterministic).
// A decision is applied only to a request that still has the digest it names:
// the same id, task, turn, reason, paths and asking process.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace leasefs::fleet {

// The canonical form of a pending request as `status` reports it.
nlohmann::json canonical_request(const nlohmann::json& pending);

// Lower-case hex SHA-256 of canonical_request(pending).dump().
std::string request_digest(const nlohmann::json& pending);

}  // namespace leasefs::fleet

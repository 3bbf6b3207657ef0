// `audit verify`'s second half: the signed heads of this root's chain, checked
// with the verifier key a person gives (signing/head_verifier.hpp), after the
// chain itself has been verified.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "memory/audit_log.hpp"

namespace leasefs::daemon {

// {"checked": false, "entries": N} without a key; with one, {"checked": true,
// "heads": N, "last_size": S, "key": NAME} when every check holds. Throws
// Error{invalid_argument} for a key that does not parse and Error{audit_broken}
// naming the first finding (and how many more there are).
nlohmann::json check_signed_heads(const std::vector<memory::AuditLink>& links,
                                  const std::string& heads_text, const std::string& origin,
                                  const std::optional<std::string>& key);

}  // namespace leasefs::daemon

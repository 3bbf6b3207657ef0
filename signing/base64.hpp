// Standard base64 (RFC 4648, section 4), as the signed-note and checkpoint specs
// use it, through OpenSSL.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace leasefs::signing {

std::string base64_encode(std::string_view bytes);

// The bytes, or nullopt unless `text` is their one canonical encoding (padded,
// no whitespace, unused bits zero): a signed text has exactly one spelling, so
// no byte of it can change without the verifier seeing it.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace leasefs::signing

// SHA-256 through OpenSSL's EVP interface, as lowercase hex.
#pragma once

#include <string>
#include <string_view>

namespace leasefs::memory {

// Throws MemoryError if OpenSSL fails.
std::string sha256_hex(std::string_view data);

}  // namespace leasefs::memory

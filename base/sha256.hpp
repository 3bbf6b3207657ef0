// SHA-256 through OpenSSL's EVP interface, as lowercase hex.
#pragma once

#include <string>
#include <string_view>

namespace leasefs::base {

// Throws std::runtime_error if OpenSSL fails.
std::string sha256_hex(std::string_view data);

// SHA-256 of everything readable from `fd` from offset 0, lower-case hex; empty on
// a read error (the caller says the hash was skipped).
std::string sha256_hex_fd(int fd);

}  // namespace leasefs::base

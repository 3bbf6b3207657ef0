#include "leasectl/console_guard.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace leasefs::leasectl {

std::string new_console_token() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    throw std::runtime_error("OpenSSL's RAND_bytes gave no random bytes for the token");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

ConsoleGuard::ConsoleGuard(std::string token, const std::string& listen_host, int port)
    : token_(std::move(token)) {
  const std::string p = ":" + std::to_string(port);
  hosts_.push_back(
      (listen_host.find(':') != std::string::npos ? "[" + listen_host + "]" : listen_host) + p);
  if (listen_host == "127.0.0.1" || listen_host == "::1") hosts_.push_back("localhost" + p);
}

bool ConsoleGuard::token_ok(std::string_view given) const {
  // Only the length shows, and every token has the same length.
  return given.size() == token_.size() &&
         CRYPTO_memcmp(given.data(), token_.data(), token_.size()) == 0;
}

bool ConsoleGuard::host_ok(std::string_view host) const {
  for (const auto& h : hosts_) {
    if (host == h) return true;
  }
  return false;
}

bool ConsoleGuard::origin_ok(std::string_view origin) const {
  constexpr std::string_view kScheme = "http://";
  return origin.substr(0, kScheme.size()) == kScheme && host_ok(origin.substr(kScheme.size()));
}

}  // namespace leasefs::leasectl

#include "signing/verifier_key.hpp"

#include <openssl/sha.h>

#include <cstdio>

#include "signing/base64.hpp"
#include "signing/ed25519_key.hpp"

namespace leasefs::signing {

bool valid_key_name(std::string_view name) noexcept {
  if (name.empty()) return false;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '+') return false;
  }
  return true;
}

uint32_t ed25519_key_id(std::string_view name, std::string_view public_key) {
  std::string input(name);
  input += '\n';
  input += static_cast<char>(kEd25519SignatureType);
  input += public_key;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  return (uint32_t{digest[0]} << 24) | (uint32_t{digest[1]} << 16) | (uint32_t{digest[2]} << 8) |
         uint32_t{digest[3]};
}

VerifierKey VerifierKey::of(std::string name, std::string public_key) {
  VerifierKey key;
  key.id = ed25519_key_id(name, public_key);
  key.name = std::move(name);
  key.public_key = std::move(public_key);
  return key;
}

std::string VerifierKey::text() const {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", id);
  return name + "+" + hex + "+" +
         base64_encode(std::string(1, static_cast<char>(kEd25519SignatureType)) + public_key);
}

std::optional<VerifierKey> parse_verifier_key(std::string_view text, std::string* why) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\t' ||
                           text.back() == '\r')) {
    text.remove_suffix(1);
  }
  const size_t first = text.find('+');
  const size_t second = first == std::string_view::npos ? first : text.find('+', first + 1);
  if (second == std::string_view::npos) {
    *why = "a verifier key is NAME+KEYID+KEY (as `leasefs keygen` prints it)";
    return std::nullopt;
  }
  const std::string_view name = text.substr(0, first);
  const std::string_view hex = text.substr(first + 1, second - first - 1);
  const std::string_view key = text.substr(second + 1);
  if (!valid_key_name(name)) {
    *why =
        "the verifier key's name is empty or holds a space, '+' or a character that is not "
        "printable ASCII";
    return std::nullopt;
  }
  if (hex.size() != 8 || hex.find_first_not_of("0123456789abcdef") != std::string_view::npos) {
    *why = "the verifier key's ID is not 8 lower-case hex digits";
    return std::nullopt;
  }
  const auto raw = base64_decode(key);
  if (!raw || raw->size() != 1 + kEd25519PublicKeyBytes ||
      static_cast<unsigned char>((*raw)[0]) != kEd25519SignatureType) {
    *why = "the verifier key is not an Ed25519 key (base64 of 0x01 and 32 bytes)";
    return std::nullopt;
  }
  VerifierKey out = VerifierKey::of(std::string(name), raw->substr(1));
  if (std::string(hex) != out.text().substr(name.size() + 1, 8)) {
    *why = "the verifier key's ID does not match its name and key";
    return std::nullopt;
  }
  return out;
}

}  // namespace leasefs::signing

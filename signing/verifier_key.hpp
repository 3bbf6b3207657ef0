// A signed-note verifier key: the key name, the Ed25519 public key and its key
// ID, and the one-line text people pass around (`leasectl audit verify --key`):
//
//   <key name>+<8 hex digits of the key ID>+<base64(0x01 || 32-byte public key)>
//
// as Go's golang.org/x/mod/sumdb/note writes it, and the key ID as the C2SP
// signed-note spec recommends for Ed25519:
//
//   key ID = SHA-256(key name || 0x0A || 0x01 || public key)[:4], big-endian
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace leasefs::signing {

inline constexpr unsigned char kEd25519SignatureType = 0x01;

// Whether `name` may name a key: non-empty, printable ASCII without a space or
// '+'. The spec allows any UTF-8 without Unicode spaces; the names leasefs makes
// are ASCII, and taking no more keeps look-alike names out.
bool valid_key_name(std::string_view name) noexcept;

uint32_t ed25519_key_id(std::string_view name, std::string_view public_key);

struct VerifierKey {
  std::string name;
  std::string public_key;  // 32 bytes
  uint32_t id = 0;

  static VerifierKey of(std::string name, std::string public_key);
  std::string text() const;
};

// The key `text` spells (surrounding whitespace ignored), or nullopt with the
// reason in `why`: not three parts, a bad name, not Ed25519, or a key ID that is
// not the one the name and key give.
std::optional<VerifierKey> parse_verifier_key(std::string_view text, std::string* why);

}  // namespace leasefs::signing

// An Ed25519 key pair through OpenSSL EVP: made, read from and written to PEM
// (PKCS#8), signing and verifying (RFC 8032, pure Ed25519).
#pragma once

#include <memory>
#include <string>
#include <string_view>

typedef struct evp_pkey_st EVP_PKEY;

namespace leasefs::signing {

inline constexpr size_t kEd25519PublicKeyBytes = 32;
inline constexpr size_t kEd25519SignatureBytes = 64;

class Ed25519Key {
 public:
  // A new key from the system's random source. Throws std::runtime_error.
  static Ed25519Key generate();
  // The key a 32-byte RFC 8032 seed gives (for fixed test vectors).
  static Ed25519Key from_seed(std::string_view seed);
  // The key in a PEM PKCS#8 text; throws std::runtime_error when it is not one
  // or not Ed25519.
  static Ed25519Key from_pem(std::string_view pem);

  std::string pem() const;                           // PKCS#8, unencrypted
  std::string public_key() const;                    // the 32 bytes of RFC 8032
  std::string sign(std::string_view message) const;  // 64 bytes

 private:
  struct Free {
    void operator()(EVP_PKEY* key) const noexcept;
  };
  explicit Ed25519Key(EVP_PKEY* key) : key_(key) {}
  std::unique_ptr<EVP_PKEY, Free> key_;
};

// Whether `signature` is `public_key`'s over `message`; false for any size that
// is wrong.
bool ed25519_verify(std::string_view public_key, std::string_view message,
                    std::string_view signature) noexcept;

}  // namespace leasefs::signing

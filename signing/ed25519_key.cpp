#include "signing/ed25519_key.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <stdexcept>

namespace leasefs::signing {
namespace {

[[noreturn]] void fail(const char* what) {
  char detail[256] = "";
  ERR_error_string_n(ERR_get_error(), detail, sizeof detail);
  ERR_clear_error();
  throw std::runtime_error(std::string("ed25519: ") + what + ": " + detail);
}

struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const noexcept { EVP_MD_CTX_free(ctx); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

struct BioFree {
  void operator()(BIO* bio) const noexcept { BIO_free(bio); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

}  // namespace

void Ed25519Key::Free::operator()(EVP_PKEY* key) const noexcept {
  EVP_PKEY_free(key);
}

Ed25519Key Ed25519Key::generate() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (!key) fail("cannot make a key");
  return Ed25519Key(key);
}

Ed25519Key Ed25519Key::from_seed(std::string_view seed) {
  EVP_PKEY* key = EVP_PKEY_new_raw_private_key(
      EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(seed.data()), seed.size());
  if (!key) fail("not a 32-byte seed");
  return Ed25519Key(key);
}

Ed25519Key Ed25519Key::from_pem(std::string_view pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) fail("out of memory");
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
  if (!key) fail("not a PEM private key");
  Ed25519Key out(key);
  if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    throw std::runtime_error("ed25519: the PEM key is not an Ed25519 key");
  }
  return out;
}

std::string Ed25519Key::pem() const {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    fail("cannot write the key");
  }
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string Ed25519Key::public_key() const {
  std::string out(kEd25519PublicKeyBytes, '\0');
  size_t n = out.size();
  if (EVP_PKEY_get_raw_public_key(key_.get(), reinterpret_cast<unsigned char*>(out.data()), &n) !=
          1 ||
      n != kEd25519PublicKeyBytes) {
    fail("cannot read the public key");
  }
  return out;
}

std::string Ed25519Key::sign(std::string_view message) const {
  MdCtx ctx(EVP_MD_CTX_new());
  // Ed25519 takes the message whole: no digest is named.
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1) {
    fail("cannot start signing");
  }
  std::string sig(kEd25519SignatureBytes, '\0');
  size_t n = sig.size();
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &n,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
      n != kEd25519SignatureBytes) {
    fail("cannot sign");
  }
  return sig;
}

bool ed25519_verify(std::string_view public_key, std::string_view message,
                    std::string_view signature) noexcept {
  if (public_key.size() != kEd25519PublicKeyBytes || signature.size() != kEd25519SignatureBytes) {
    return false;
  }
  std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)> key(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                  reinterpret_cast<const unsigned char*>(public_key.data()),
                                  public_key.size()),
      EVP_PKEY_free);
  MdCtx ctx(EVP_MD_CTX_new());
  bool ok =
      key && ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) == 1 &&
      EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                       signature.size(), reinterpret_cast<const unsigned char*>(message.data()),
                       message.size()) == 1;
  ERR_clear_error();
  return ok;
}

}  // namespace leasefs::signing

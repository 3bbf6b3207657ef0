#include "base/sha256.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <stdexcept>

namespace leasefs::base {

namespace {

std::string to_hex(const unsigned char* digest, unsigned int length) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0x0f];
  }
  return hex;
}

// OpenSSL 3 looks EVP_sha256() up in its provider store, under a lock, at every
// digest it starts (an "implicit fetch"); an algorithm fetched once is used as
// it is. Fetched on first use and kept for the life of the process.
const EVP_MD* sha256_md() {
  static const EVP_MD* const md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched ? fetched : EVP_sha256();
  }();
  return md;
}

using DigestCtx = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

// One context per thread, started afresh by each digest: no allocation per hash.
EVP_MD_CTX* thread_ctx() {
  thread_local DigestCtx ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  return ctx.get();
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  EVP_MD_CTX* ctx = thread_ctx();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!ctx || EVP_DigestInit_ex2(ctx, sha256_md(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx, data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, digest, &length) != 1) {
    throw std::runtime_error("openssl: SHA-256 digest failed");
  }
  return to_hex(digest, length);
}

std::string sha256_hex_fd(int fd) {
  EVP_MD_CTX* ctx = thread_ctx();
  if (!ctx || EVP_DigestInit_ex2(ctx, sha256_md(), nullptr) != 1) return {};
  char buf[64 * 1024];
  off_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {};
    if (n == 0) break;
    if (EVP_DigestUpdate(ctx, buf, static_cast<size_t>(n)) != 1) return {};
    offset += n;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx, digest, &length) != 1) return {};
  return to_hex(digest, length);
}

}  // namespace leasefs::base

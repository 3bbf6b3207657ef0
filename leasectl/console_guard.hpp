// Who may use the console: the holder of its token, through the address it
// listens on. The token is shown once, on the console's stdout; a browser keeps
// it in a cookie for pages and events and sends it in a header with every action.
// A page of another site cannot read it, and a rebound DNS name does not match
// the Host the console expects.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace leasefs::leasectl {

// 32 bytes from OpenSSL's RAND_bytes, as hex. Throws std::runtime_error when it
// gives none.
std::string new_console_token();

class ConsoleGuard {
 public:
  // `listen_host` and `port` are where the console listens; on a loopback
  // address "localhost:PORT" is accepted as well.
  ConsoleGuard(std::string token, const std::string& listen_host, int port);

  const std::string& token() const { return token_; }
  // Compared in constant time (CRYPTO_memcmp).
  bool token_ok(std::string_view given) const;
  bool host_ok(std::string_view host) const;
  // An Origin header, when a browser sends one, must be this console's own.
  bool origin_ok(std::string_view origin) const;

 private:
  std::string token_;
  std::vector<std::string> hosts_;
};

}  // namespace leasefs::leasectl

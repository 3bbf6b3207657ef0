// A small blocking client of the control socket: leasectl, tests and the bench.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "base/unique_fd.hpp"

namespace leasefs::protocol {

// Nobody answers on the socket (missing, refused, timed out, hung up).
class NoDaemon : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Client {
 public:
  static constexpr size_t kMaxReplyBytes = size_t{64} << 20;

  // Throws NoDaemon naming the path and the reason.
  static Client connect(const std::string& socket_path);

  // Sends one request and waits for its reply (ids are numbered per client).
  // Throws NoDaemon if the connection breaks or no reply comes within `timeout`.
  nlohmann::json call(std::string_view cmd, nlohmann::json args = nlohmann::json::object(),
                      const std::optional<std::string>& idempotency_key = std::nullopt,
                      std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // Raw access for tests and watch.
  void send_raw(std::string_view bytes);
  // The next line without its newline; nullopt on timeout; throws NoDaemon on EOF.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  int fd() const noexcept { return fd_.get(); }
  void close() { fd_.reset(); }

 private:
  explicit Client(base::UniqueFd fd, std::string path)
      : fd_(std::move(fd)), path_(std::move(path)) {}
  base::UniqueFd fd_;
  std::string path_;
  std::string buffer_;
  int64_t next_id_ = 1;
};

}  // namespace leasefs::protocol

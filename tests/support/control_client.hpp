// A tiny client of the control protocol for tests: newline-delimited JSON over a
// Unix stream socket. Deliberately independent of gate/control, so a test speaks
// the protocol from the outside, as any client would.
//   ControlClient c(socket);
//   auto reply = c.call("start", {{"description", "x"}});   // {"id":1,"ok":true,...}
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace leasefs::test {

class ControlClient {
 public:
  explicit ControlClient(const std::string& socket_path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof addr.sun_path) throw std::runtime_error("path too long");
    std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      int err = errno;
      ::close(fd_);
      throw std::runtime_error("connect " + socket_path + ": " + std::strerror(err));
    }
  }
  ~ControlClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  ControlClient(const ControlClient&) = delete;
  ControlClient& operator=(const ControlClient&) = delete;

  // Sends {"id":N,"cmd":cmd,"args":args} and returns the reply with that id.
  nlohmann::json call(const std::string& cmd, nlohmann::json args = nlohmann::json::object(),
                      int timeout_ms = 10000) {
    const int64_t id = next_id_++;
    nlohmann::json req = {{"id", id}, {"cmd", cmd}, {"args", std::move(args)}};
    send_line(req.dump());
    while (true) {
      nlohmann::json reply = nlohmann::json::parse(read_line(timeout_ms));
      if (reply.contains("id") && reply["id"] == id) return reply;  // skip events
    }
  }

  void send_line(const std::string& line) {
    std::string data = line + "\n";
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send: " + std::string(std::strerror(errno)));
      off += static_cast<size_t>(n);
    }
  }

  std::string read_line(int timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
      auto nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) throw std::runtime_error("no reply from the daemon in time");
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) throw std::runtime_error("the daemon closed the connection");
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  int64_t next_id_ = 1;
  std::string buffer_;
};

}  // namespace leasefs::test

#include "protocol/client.hpp"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cstring>

#include "protocol/request.hpp"

namespace leasefs::protocol {

using Clock = std::chrono::steady_clock;

Client Client::connect(const std::string& socket_path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof(addr.sun_path)) {
    throw NoDaemon("control socket path '" + socket_path + "' is empty or too long");
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  base::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw NoDaemon(std::string("socket: ") + std::strerror(errno));
  while (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno == EINTR) continue;
    throw NoDaemon("cannot connect to " + socket_path + ": " + std::strerror(errno));
  }
  return Client(std::move(fd), socket_path);
}

void Client::send_raw(std::string_view bytes) {
  while (!bytes.empty()) {
    if (!fd_) throw NoDaemon("connection to " + path_ + " is closed");
    ssize_t n = ::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw NoDaemon("lost the connection to " + path_ + ": " + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

std::optional<std::string> Client::read_line(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (!fd_) throw NoDaemon("connection to " + path_ + " is closed");
    // A timeout that has run out (or was 0) still takes what the socket holds
    // now: a caller that saw it readable must get the line, not spin on it.
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd_.get(), POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1'000'000)));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw NoDaemon(std::string("poll: ") + std::strerror(errno));
    }
    if (r == 0) {
      if (left.count() <= 0) return std::nullopt;
      continue;
    }
    char buf[65536];
    ssize_t n = ::recv(fd_.get(), buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw NoDaemon("lost the connection to " + path_ + ": " + std::strerror(errno));
    }
    if (n == 0) throw NoDaemon("the daemon at " + path_ + " closed the connection");
    buffer_.append(buf, static_cast<size_t>(n));
    if (buffer_.size() > kMaxReplyBytes) {
      throw NoDaemon("reply from " + path_ + " is larger than " + std::to_string(kMaxReplyBytes) +
                     " bytes");
    }
  }
}

nlohmann::json Client::call(std::string_view cmd, nlohmann::json args,
                            const std::optional<std::string>& idempotency_key,
                            std::chrono::milliseconds timeout) {
  int64_t id = next_id_++;
  nlohmann::json req = {{"id", id}, {"cmd", std::string(cmd)}, {"args", std::move(args)}};
  if (idempotency_key) req["idempotency_key"] = *idempotency_key;
  send_raw(to_line(req));
  while (true) {
    auto line = read_line(timeout);
    if (!line) {
      throw NoDaemon("no reply from " + path_ + " within " + std::to_string(timeout.count()) +
                     " ms");
    }
    auto reply = nlohmann::json::parse(*line, nullptr, false);
    if (reply.is_discarded() || !reply.is_object()) {
      throw NoDaemon("the daemon at " + path_ + " sent a line that is not a JSON object");
    }
    // Replies come back in request order; skip anything that is not ours. A reply
    // with a null id answers a line the daemon could not read (or says it is busy).
    nlohmann::json rid = reply.value("id", nlohmann::json());
    if (rid == nlohmann::json(id) || rid.is_null()) return reply;
  }
}

}  // namespace leasefs::protocol

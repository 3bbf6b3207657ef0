#include "control/connection.hpp"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/socket.h>

namespace leasefs::control {

namespace {
constexpr size_t kReadChunk = 64 * 1024;
}

Connection::Connection(uint64_t id_, base::UniqueFd fd_, const gate::Actor& actor_,
                       std::unique_ptr<UidBudgets::Slot> slot_)
    : id(id_), fd(std::move(fd_)), actor(actor_), slot(std::move(slot_)) {}

bool Connection::read(uint32_t revents) {
  char buf[kReadChunk];
  ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
  if (n > 0) {
    bool was_partial = framer.buffered() > 0 || framer.discarding();
    framer.feed(std::string_view(buf, static_cast<size_t>(n)));
    last_active = Clock::now();
    bool partial = framer.buffered() > 0 || framer.discarding();
    if (!partial) {
      line_started = Clock::time_point{};
    } else if (!was_partial || line_started == Clock::time_point{}) {
      line_started = last_active;
    }
    return true;
  }
  if (n == 0) {
    eof = true;
    // A last request without its newline counts when the peer only shut down
    // its sending side (printf '...' | nc -N): it is still there to read the
    // reply. One that went away entirely (hang-up) gets nothing run.
    if (!(revents & (EPOLLHUP | EPOLLERR))) framer.finish();
    return true;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
    if (revents & (EPOLLERR | EPOLLHUP)) eof = true;
    return true;
  }
  return false;  // reset by peer and the like
}

bool Connection::discard_input(uint32_t revents) {
  if (revents & (EPOLLHUP | EPOLLRDHUP | EPOLLERR)) return false;
  char sink[4096];
  ssize_t n = ::recv(fd.get(), sink, sizeof(sink), 0);
  if (n == 0) return false;
  return n > 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

void Connection::queue(std::string line) {
  // The write clock starts when there is something to write.
  if (out.empty()) {
    last_progress = Clock::now();
    out = std::move(line);
  } else {
    out += line;
  }
}

bool Connection::flush() {
  const Sent sent = send_now(fd.get(), out);
  if (sent.bytes > 0) last_progress = Clock::now();
  out.erase(0, sent.bytes);
  return sent.alive;
}

Sent send_now(int fd, std::string_view bytes) {
  Sent sent;
  while (sent.bytes < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent.bytes, bytes.size() - sent.bytes,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent.bytes += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    sent.alive = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    break;
  }
  return sent;
}

void say_and_forget(int fd, const std::string& line) {
  ssize_t r = ::send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)r;
}

}  // namespace leasefs::control

// One client of the control socket, as the server's event loop sees it: the
// socket, who is on the other end, the request bytes framed into lines, the
// reply bytes the peer has not taken yet, and the clocks the limits of
// server.hpp are measured with. Touched by the event loop only, so it has no
// lock: a worker gets a copy of a line and the socket to send its reply on
// (send_now), and hands back what the socket did not take, never the connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/unique_fd.hpp"
#include "control/uid_budgets.hpp"
#include "control/watch_stream.hpp"
#include "gate/actor.hpp"
#include "protocol/request.hpp"

namespace leasefs::control {

struct Connection {
  using Clock = std::chrono::steady_clock;

  Connection(uint64_t id, base::UniqueFd fd, const gate::Actor& actor,
             std::unique_ptr<UidBudgets::Slot> slot);

  const uint64_t id;  // never reused, so a late reply cannot reach another client
  base::UniqueFd fd;
  const gate::Actor actor;
  std::unique_ptr<UidBudgets::Slot> slot;  // a connection's, then a watch stream's
  protocol::LineFramer framer;
  std::string out;  // the rest of a reply (or event) the peer has not taken yet
  Clock::time_point last_active = Clock::now();
  Clock::time_point last_progress = Clock::now();  // of writing `out`
  Clock::time_point line_started{};                // first byte of the unfinished line, if any
  bool busy = false;  // a worker runs one of its requests; it is not armed meanwhile
  bool eof = false;   // the peer shut down its side; finish pending lines, then close
  std::unique_ptr<WatchStream> stream;  // set once it is a watch stream

  // Reads what the peer sent into the framer. False when the peer is gone
  // (reset and the like); an orderly end sets `eof` instead.
  bool read(uint32_t revents);
  // A watch stream's peer has nothing to say: what it sends is read and
  // ignored. False once it hangs up or shuts down its side.
  bool discard_input(uint32_t revents);
  // Adds `line` to what the peer is to be sent.
  void queue(std::string line);
  // Writes what the peer takes now, without waiting. False when it is gone.
  bool flush();
};

// Writes what the socket takes of `bytes` now, without waiting: how many it
// took, and false in `alive` when the peer is gone (any error but a full socket).
struct Sent {
  size_t bytes = 0;
  bool alive = true;
};
Sent send_now(int fd, std::string_view bytes);

// Writes `line` if the socket takes it now, and forgets it otherwise: the last
// word to a peer that is being closed or turned away.
void say_and_forget(int fd, const std::string& line);

}  // namespace leasefs::control

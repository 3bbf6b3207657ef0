// The control socket server.
//
// One model: a single event loop owns every socket and every connection's state;
// a small fixed pool of workers runs commands and nothing else. They meet in two
// queues: a request line goes to the workers (approvers' first), its reply comes
// back to the loop with a wake-up on an eventfd. Nothing a peer does or fails to
// do can hold a worker, and connection state needs no lock.
//
// The loop (server.cpp) accepts (listener.hpp), reads and frames lines, applies
// the budgets (uid_budgets.hpp), writes replies as the peer takes them, and
// closes what is idle, slow or done (connection.hpp). A `watch` stream is a
// connection in another mode (watch_stream.hpp): its subscription wakes the same
// loop, which writes each event while the peer reads.
//
// Why an event loop and not a thread per connection: a client that connects and
// sends nothing, or sends half a line and stalls, costs one descriptor and a few
// bytes of buffer, never a thread, so no number of silent clients can starve the
// ones that talk. Commands are serialized by the Service anyway, so a handful of
// workers is all the parallelism there is to have.
//
// A connection runs at most one request at a time and its replies come back in
// request order: while a worker has its request it is not read, and while a
// reply waits for the peer to take it (one reply at most) no further request of
// that connection runs. So clients that send and never read cost a descriptor
// and one reply of memory each, not a worker.
//
// Limits: lines over 1 MiB are answered with line_too_long and skipped; at most
// max_connections are open (more are answered `busy` and closed); idle ones are
// closed after idle_timeout; a reply (or watch event) the peer takes nothing of
// for write_timeout drops its connection. Per-uid budgets with a reserve for
// approvers, a request rate and a deadline for finishing a line: budget.hpp. A peer that goes away
// mid-request is simply dropped. A last request without its newline is run when the peer shuts down
// its sending side (it can still read the reply), not when it hangs up.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "control/budget.hpp"
#include "control/commands.hpp"
#include "control/listener.hpp"
#include "control/peer.hpp"
#include "report/event_bus.hpp"

namespace leasefs::control {

struct ServerOptions {
  std::string socket_path;
  mode_t socket_mode = 0660;
  // Group given the socket, so that an agent running as another user in that group
  // can ask, turn and checkpoint; -1 keeps the daemon's group.
  gid_t socket_gid = static_cast<gid_t>(-1);
  ApproverPolicy approvers;
  size_t workers = 4;
  size_t max_connections = 512;
  size_t max_watchers = 64;
  int backlog = 512;
  std::chrono::milliseconds idle_timeout{30'000};
  std::chrono::milliseconds write_timeout{2'000};
  // Per-uid budgets and approvers' reserve (see budget.hpp).
  Budgets budgets;
  // Where refusals are counted; may be shared with `status`. Null: the server's own.
  std::shared_ptr<BudgetCounters> counters;
};

class Server {
 public:
  Server(ServerOptions options, Dispatcher& dispatcher, report::EventBus& events);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Creates the socket's directory (mkdir -p, 0755), replaces a stale socket
  // file nobody answers on, binds, chmods, listens and starts the threads.
  // Throws Error{io_error} naming the path and the reason.
  void start();
  // Closes every connection (watch streams too, even one blocked writing to a
  // peer that does not read) and joins every thread; idempotent.
  void stop();

  const std::string& socket_path() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace leasefs::control

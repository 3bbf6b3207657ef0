// The control socket server.
//
// Shape: one epoll thread owns the listening socket and every idle connection;
// a small fixed pool of workers runs commands; each `watch` stream gets a thread
// of its own, up to a bound.
//
// Why epoll and not a thread per connection: a client that connects and sends
// nothing, or sends half a line and stalls, costs one descriptor and a few bytes
// of buffer, never a thread, so no number of silent clients can starve the ones
// that talk. Commands are serialized by the Service anyway, so a handful of
// workers is all the parallelism there is to have (memory.search and status can
// still overlap with a write command waiting on its fsync).
//
// Ownership of a connection moves, never shares: while armed in epoll (one-shot)
// it belongs to the epoll thread; once a complete line is read it is handed to a
// worker, which runs every complete line in order, writes each reply, and re-arms
// it. A connection therefore runs at most one request at a time and its replies
// come back in request order. Every hand-over takes the connection table's mutex,
// which orders the two owners' accesses (the one-shot re-arm alone would, but no
// race detector can see that). Whoever owns a connection is the only one that may
// close it; the same mutex orders that with the reaper.
//
// Replies never block a worker: what the peer's socket does not take at once is
// kept (one reply at most) and written by the epoll thread as the peer reads, and
// no further request of that connection runs until it has. So clients that send
// and never read cost a descriptor and one reply of memory each, not a worker.
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
#include "control/peer.hpp"
#include "service/event_bus.hpp"

namespace leasefs::gate::control {

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
  Server(ServerOptions options, Dispatcher& dispatcher, EventBus& events);
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
  size_t connection_count() const;
  size_t watcher_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Creates `dir` and its missing parents with mode 0755. Throws Error{io_error}.
void make_socket_dir(const std::string& dir);

}  // namespace leasefs::gate::control

#include "control/server.hpp"

#include <errno.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/error.hpp"
#include "base/thread_name.hpp"
#include "base/unique_fd.hpp"
#include "control/connection.hpp"
#include "control/uid_budgets.hpp"
#include "control/watch_stream.hpp"
#include "control/worker_pool.hpp"

namespace leasefs::control {

namespace {

using Clock = std::chrono::steady_clock;

// epoll tags: a connection is tagged with its id, which starts above these.
constexpr uint64_t kListenTag = 0;
constexpr uint64_t kWakeTag = 1;

}  // namespace

struct Server::Impl {
  // A worker's answer to one request, on its way back to the loop.
  struct Done {
    uint64_t conn;
    Dispatcher::Outcome outcome;
  };

  Impl(ServerOptions o, Dispatcher& d, report::EventBus& e)
      : options(std::move(o)),
        dispatcher(d),
        events(e),
        budgets(options.budgets, options.max_connections, options.max_watchers,
                options.counters ? options.counters : std::make_shared<BudgetCounters>(), events) {}

  ServerOptions options;
  Dispatcher& dispatcher;
  report::EventBus& events;
  UidBudgets budgets;

  Listener listener;
  base::UniqueFd epoll_fd;
  base::UniqueFd wake_fd;  // workers and watch subscriptions wake the loop
  WorkerPool pool;
  std::thread loop_thread;
  std::atomic<bool> stopping{false};
  bool stopped = false;

  // Counted by the loop, read by anyone.
  std::atomic<size_t> connections{0};
  std::atomic<size_t> watchers{0};

  // The loop's alone.
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> conns;
  uint64_t next_id = kWakeTag + 1;
  Clock::time_point accept_paused_until{};
  bool accept_paused = false;

  // Connections to pump again without waiting for their socket (pump_again).
  std::vector<uint64_t> again;

  // Workers to loop.
  std::mutex done_mu;
  std::vector<Done> done;

  // --- start and stop ----------------------------------------------------

  void start() {
    listener.open({options.socket_path, options.socket_mode, options.socket_gid, options.backlog});
    epoll_fd.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_fd) throw_io_error("epoll_create1", errno);
    wake_fd.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!wake_fd) throw_io_error("eventfd", errno);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenTag;
    if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, listener.fd(), &ev) != 0) {
      throw_io_error("epoll_ctl", errno);
    }
    ev.data.u64 = kWakeTag;
    if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, wake_fd.get(), &ev) != 0) {
      throw_io_error("epoll_ctl", errno);
    }
    pool.start(options.workers);
    loop_thread = std::thread([this] {
      base::name_this_thread("control");
      loop_main();
    });
    spdlog::info("control: listening on {}", options.socket_path);
  }

  // No thread ever waits on a peer, so stopping is: end the loop, let the
  // running commands finish, then close everything.
  void stop() {
    if (stopped) return;
    stopped = true;
    stopping = true;
    wake();
    if (loop_thread.joinable()) loop_thread.join();
    pool.stop();
    conns.clear();
    connections = 0;
    watchers = 0;
    {
      std::lock_guard lock(done_mu);
      done.clear();
    }
    listener.close();
  }

  // Any thread. Not blocking; several wake-ups before the loop looks are one.
  void wake() {
    if (!wake_fd) return;
    uint64_t one = 1;
    ssize_t r = ::write(wake_fd.get(), &one, sizeof(one));
    (void)r;
  }

  // --- the loop ------------------------------------------------------------

  void loop_main() {
    std::vector<epoll_event> ready(64);
    while (!stopping) {
      const int timeout_ms = again.empty() ? 250 : 0;
      int n =
          ::epoll_wait(epoll_fd.get(), ready.data(), static_cast<int>(ready.size()), timeout_ms);
      if (n < 0) {
        if (errno == EINTR) continue;
        spdlog::error("control: epoll_wait: {}", std::strerror(errno));
        break;
      }
      bool woken = false;
      for (int i = 0; i < n && !stopping; ++i) {
        uint64_t tag = ready[i].data.u64;
        if (tag == kWakeTag) {
          uint64_t v = 0;
          ssize_t r = ::read(wake_fd.get(), &v, sizeof(v));
          (void)r;
          woken = true;
        } else if (tag == kListenTag) {
          accept_all();
        } else if (Connection* c = find(tag)) {
          on_ready(c, ready[i].events);
        }
      }
      if (woken && !stopping) {
        take_replies();
        pump_streams();
      }
      if (!stopping) pump_again();
      housekeeping();
    }
  }

  Connection* find(uint64_t id) {
    auto it = conns.find(id);
    return it == conns.end() ? nullptr : it->second.get();
  }

  void accept_all() {
    while (!stopping) {
      base::UniqueFd client;
      switch (listener.accept(&client)) {
        case Listener::Accepted::kEmpty:
          return;
        case Listener::Accepted::kOutOfDescriptors:
          pause_accepting();
          return;
        case Listener::Accepted::kClient:
          break;
      }
      auto actor = peer_actor(client.get(), options.approvers);
      if (!actor) {
        spdlog::warn("control: dropping a connection whose peer credentials are unknown");
        continue;
      }
      std::string why;
      auto slot = budgets.take_connection(*actor, connections, &why);
      if (!slot) {
        say_and_forget(client.get(),
                       protocol::to_line(protocol::error_reply(nullptr, Errc::kBusy, why)));
        continue;
      }
      auto conn =
          std::make_unique<Connection>(next_id++, std::move(client), *actor, std::move(slot));
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
      ev.data.u64 = conn->id;
      if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, conn->fd.get(), &ev) != 0) {
        spdlog::error("control: epoll_ctl add: {}", std::strerror(errno));
        continue;
      }
      conns.emplace(conn->id, std::move(conn));
      ++connections;
    }
  }

  // Out of descriptors: stop accepting for a moment instead of spinning on a
  // listening socket that stays readable. Waiting clients sit in the backlog.
  void pause_accepting() {
    epoll_event ev{};
    ev.events = 0;
    ev.data.u64 = kListenTag;
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_MOD, listener.fd(), &ev);
    accept_paused = true;
    accept_paused_until = Clock::now() + std::chrono::milliseconds(100);
  }

  // An armed connection fired (arming is one-shot: it is disarmed now).
  void on_ready(Connection* c, uint32_t revents) {
    bool alive = true;
    if (!c->out.empty()) {
      // It was waiting for room to write; pump() writes.
    } else if (c->stream) {
      alive = c->discard_input(revents);
    } else {
      alive = c->read(revents);
    }
    if (!alive) {
      close(c);
      return;
    }
    pump(c);
  }

  // Moves `c` as far as it goes without waiting: writes what is pending, then
  // the next event of a stream, or the next request of a connection; then arms
  // it for what it waits on, or closes it when it is done. `c` may be gone after.
  void pump(Connection* c) {
    while (true) {
      if (!c->out.empty()) {
        if (!c->flush()) {
          close(c);
          return;
        }
        if (!c->out.empty()) {
          arm(c, EPOLLOUT);
          return;
        }
      }
      if (c->stream) {
        if (auto line = c->stream->next_line()) {
          c->queue(std::move(*line));
          continue;
        }
        if (c->stream->ended()) {
          close(c);
          return;
        }
        arm(c, EPOLLIN | EPOLLRDHUP);
        return;
      }
      if (c->busy) return;  // left disarmed until its reply is back
      auto line = c->framer.next();
      if (!line) {
        if (c->eof) {
          close(c);  // gone mid-request, or done: either way, nothing to answer
        } else {
          arm(c, EPOLLIN | EPOLLRDHUP);
        }
        return;
      }
      if (line->too_long) {
        c->queue(protocol::to_line(protocol::error_reply(
            nullptr, Errc::kLineTooLong,
            "request line longer than " + std::to_string(protocol::kMaxLineBytes) +
                " bytes; it was discarded")));
        continue;
      }
      if (line->text.find_first_not_of(" \t\r") == std::string::npos) {
        continue;  // blank lines are allowed between requests
      }
      std::string why;
      if (!budgets.take_request(c->actor, &why)) {
        c->queue(protocol::to_line(protocol::error_reply(nullptr, Errc::kBusy, why)));
        continue;
      }
      if (auto outcome = dispatcher.try_on_loop(line->text, c->actor)) {
        deliver(c, std::move(*outcome));
        // Its next request waits for this round's other connections.
        if (!c->flush()) {
          close(c);
        } else {
          again.push_back(c->id);
        }
        return;
      }
      run(c, std::move(line->text));
      return;
    }
  }

  // A reply for `c`, from the loop or a worker.
  void deliver(Connection* c, Dispatcher::Outcome outcome) {
    c->last_active = Clock::now();
    c->last_progress = c->last_active;
    if (outcome.stream) {
      start_watch(c, outcome);
    } else {
      c->queue(std::move(outcome.line));
    }
  }

  // Connections answered on the loop last round, pumped once more each.
  void pump_again() {
    std::vector<uint64_t> ids;
    ids.swap(again);
    for (uint64_t id : ids) {
      if (Connection* c = find(id)) pump(c);
    }
  }

  // Hands one request line to the workers. The worker writes the reply itself,
  // as far as the socket takes it now: the peer has its answer without waiting
  // for the loop to wake. Nothing else can be written to the connection
  // meanwhile: while busy it is disarmed, its `out` is empty (pump runs a line
  // only then) and the loop neither closes it nor writes to it. What the socket
  // does not take, and a watch's ack, come back to the loop by take_replies(),
  // which also arms the connection for its next request.
  void run(Connection* c, std::string line) {
    c->busy = true;
    pool.submit(
        [this, id = c->id, fd = c->fd.get(), actor = c->actor, line = std::move(line)] {
          Done d{id, dispatcher.handle_line(line, actor)};
          if (!d.outcome.stream) d.outcome.line.erase(0, send_now(fd, d.outcome.line).bytes);
          {
            std::lock_guard lock(done_mu);
            done.push_back(std::move(d));
          }
          wake();
        },
        c->actor.approver);
  }

  void take_replies() {
    std::vector<Done> replies;
    {
      std::lock_guard lock(done_mu);
      replies.swap(done);
    }
    for (Done& d : replies) {
      Connection* c = find(d.conn);
      if (!c) continue;  // closed meanwhile (stop, or its peer is gone)
      c->busy = false;
      deliver(c, std::move(d.outcome));
      pump(c);
    }
  }

  // Turns `c` into a watch stream after its ack, unless the watch streams'
  // budget refuses it: then `c` stays a connection and gets a `busy` reply.
  void start_watch(Connection* c, Dispatcher::Outcome& ack) {
    std::string why;
    auto slot = budgets.take_watcher(c->actor, watchers, &why);
    if (!slot) {
      c->queue(protocol::to_line(
          protocol::error_reply(ack.reply().value("id", nlohmann::json()), Errc::kBusy, why)));
      return;
    }
    c->slot = std::move(slot);  // and the connection's slot is given back
    --connections;
    ++watchers;
    c->stream = std::make_unique<WatchStream>(events, [this] { wake(); });
    c->queue(std::move(ack.line));
  }

  void pump_streams() {
    std::vector<Connection*> streams;
    for (auto& [id, c] : conns) {
      if (c->stream && c->out.empty()) streams.push_back(c.get());
    }
    for (Connection* c : streams) pump(c);
  }

  void housekeeping() {
    auto now = Clock::now();
    if (accept_paused && now >= accept_paused_until) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = kListenTag;
      ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_MOD, listener.fd(), &ev);
      accept_paused = false;
    }
    std::vector<Connection*> expired;
    for (auto& [id, c] : conns) {
      if (c->busy) continue;
      // What is written and not taken at all for write_timeout drops the peer; a
      // connection with nothing to do is closed after idle_timeout. A stream
      // with nothing to write is never idle.
      bool drop = !c->out.empty() ? now - c->last_progress > options.write_timeout
                  : c->stream     ? false
                                  : now - c->last_active > options.idle_timeout;
      // A line begun and not finished in time: a slow sender holds nothing long.
      bool slow_line = !c->stream && c->line_started != Clock::time_point{} &&
                       now - c->line_started > options.budgets.line_timeout;
      if (slow_line && !drop) {
        budgets.slow_line(c->actor);
        say_and_forget(c->fd.get(), protocol::to_line(protocol::error_reply(
                                        nullptr, Errc::kBadRequest,
                                        "request line not finished within " +
                                            std::to_string(options.budgets.line_timeout.count()) +
                                            " ms; closing")));
        drop = true;
      }
      if (drop) expired.push_back(c.get());
    }
    for (Connection* c : expired) {
      spdlog::debug("control: closing {} connection from pid {}", c->out.empty() ? "idle" : "slow",
                    c->actor.pid);
      close(c);
    }
  }

  // Waits for `events` on `c` (once).
  void arm(Connection* c, uint32_t events_wanted) {
    epoll_event ev{};
    ev.events = events_wanted | EPOLLONESHOT;
    ev.data.u64 = c->id;
    if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_MOD, c->fd.get(), &ev) != 0) close(c);
  }

  void close(Connection* c) {
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, c->fd.get(), nullptr);
    --(c->stream ? watchers : connections);
    conns.erase(c->id);  // gives back its slot, ends its subscription, closes its socket
  }
};

Server::Server(ServerOptions options, Dispatcher& dispatcher, report::EventBus& events)
    : impl_(std::make_unique<Impl>(std::move(options), dispatcher, events)) {}

Server::~Server() {
  stop();
}

void Server::start() {
  try {
    impl_->start();
  } catch (...) {
    impl_->stop();
    throw;
  }
}

void Server::stop() {
  impl_->stop();
}

const std::string& Server::socket_path() const noexcept {
  return impl_->options.socket_path;
}

}  // namespace leasefs::control

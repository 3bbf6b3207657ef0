#include "control/server.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cassert>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "base/error.hpp"
#include "base/unique_fd.hpp"

namespace leasefs::gate::control {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 64 * 1024;

[[noreturn]] void throw_io(const std::string& what, int err) {
  throw Error(Errc::kIoError, what + ": " + std::strerror(err));
}

sockaddr_un make_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    throw Error(Errc::kIoError, "control socket path '" + path + "' must be 1 to " +
                                    std::to_string(sizeof(addr.sun_path) - 1) + " bytes long");
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

// Writes all of `data` to a non-blocking socket, waiting at most `timeout` in
// total for room. False when the peer is gone or too slow.
bool write_all(int fd, std::string_view data, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd, POLLOUT, 0};
      int r = ::poll(&p, 1, static_cast<int>(left.count()));
      if (r < 0 && errno != EINTR) return false;
      if (r > 0 && (p.revents & (POLLERR | POLLHUP | POLLNVAL))) return false;
      continue;
    }
    return false;
  }
  return true;
}

enum class SendResult { kSent, kPartial, kFailed };

// Sends as much of `data` as the socket takes now, without waiting; removes what
// was sent from `data`.
SendResult send_now(int fd, std::string& data) {
  size_t done = 0;
  SendResult result = SendResult::kSent;
  while (done < data.size()) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    result = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? SendResult::kPartial
                                                                : SendResult::kFailed;
    break;
  }
  data.erase(0, done);
  return result;
}

}  // namespace

void make_socket_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    size_t slash = dir.find('/', pos + 1);
    partial = dir.substr(0, slash);
    pos = slash;
    if (partial.empty() || partial == "/") continue;
    if (::mkdir(partial.c_str(), 0755) == 0) {
      // Not subject to the umask's whims: clients of other users must traverse it,
      // and nobody but its owner may write it.
      if (::chmod(partial.c_str(), 0755) != 0) throw_io("chmod " + partial, errno);
    } else if (errno != EEXIST) {
      throw_io("cannot create control socket directory " + partial, errno);
    }
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) throw_io("stat " + dir, errno);
  if (!S_ISDIR(st.st_mode)) {
    throw Error(Errc::kIoError, "control socket directory " + dir + " is not a directory");
  }
}

struct Server::Impl {
  // fd and actor never change after accept. The other fields belong to whoever
  // owns the connection (see server.hpp); every hand-over between the epoll thread
  // and a worker happens under conns_mu, which is also what orders their accesses.
  // Holds one unit of a uid's budget (a connection or a watch stream) and gives
  // it back when the connection or stream goes, whichever way it goes.
  struct Slot {
    Impl* impl = nullptr;
    uid_t uid = 0;
    bool watcher = false;
    bool agent = false;  // counted in the non-approvers' total too
    ~Slot() {
      if (impl) impl->give_back(*this);
    }
  };

  struct Connection {
    std::unique_ptr<Slot> slot;
    base::UniqueFd fd;
    Actor actor;
    LineFramer framer;
    std::string out;  // the rest of a reply the peer has not taken yet
    Clock::time_point last_active = Clock::now();
    Clock::time_point last_progress = Clock::now();  // of writing `out`
    bool busy = false;                               // queued for or owned by a worker
    bool eof = false;  // the peer shut down its side; finish pending lines, then close
    Clock::time_point line_started{};  // first byte of the unfinished line, if any
  };

  struct Watcher {
    std::unique_ptr<Slot> slot;
    std::thread thread;
    base::UniqueFd fd;  // closed only after the thread is joined, so stop() may shut it down
    std::atomic<bool> done{false};
  };

  Impl(ServerOptions o, Dispatcher& d, EventBus& e)
      : options(std::move(o)), dispatcher(d), events(e) {
    if (!options.counters) options.counters = std::make_shared<BudgetCounters>();
  }

  // --- budgets -------------------------------------------------------------

  struct UidUse {
    size_t connections = 0;
    size_t watchers = 0;
    double tokens = -1;  // < 0: a full bucket, not yet touched
    Clock::time_point refilled{};
  };

  std::mutex budget_mu;  // guards uses, totals and last_notice
  std::unordered_map<uid_t, UidUse> uses;
  size_t agent_connections = 0;  // held by non-approvers, all uids together
  size_t agent_watchers = 0;
  std::unordered_map<std::string, Clock::time_point> last_notice;

  // A slot for `actor`, or null with `why` set when its budget is spent.
  std::unique_ptr<Slot> take_slot(const Actor& actor, bool watcher, size_t total,
                                  std::string* why) {
    std::lock_guard lock(budget_mu);
    const Budgets& b = options.budgets;
    size_t max = watcher ? options.max_watchers : options.max_connections;
    const char* what = watcher ? "watch streams" : "control connections";
    if (total >= max) {
      *why = "too many " + std::string(what) + " (" + std::to_string(max) + "); retry later";
      return nullptr;
    }
    UidUse& use = uses[actor.uid];
    if (!actor.approver) {
      size_t reserved = watcher ? b.reserved_watchers : b.reserved_connections;
      size_t per_uid = watcher ? b.watchers_per_uid : b.connections_per_uid;
      size_t& mine = watcher ? use.watchers : use.connections;
      size_t& all = watcher ? agent_watchers : agent_connections;
      if (mine >= per_uid) {
        *why = "uid " + std::to_string(actor.uid) + " already holds " + std::to_string(mine) + " " +
               what + " (at most " + std::to_string(per_uid) + " per uid); close some and retry";
        return nullptr;
      }
      if (all + reserved >= max) {
        *why = std::string("the ") + what + " left are reserved for approvers; retry later";
        return nullptr;
      }
      ++all;
    }
    ++(watcher ? use.watchers : use.connections);
    auto slot = std::make_unique<Slot>();
    slot->impl = this;
    slot->uid = actor.uid;
    slot->watcher = watcher;
    slot->agent = !actor.approver;
    return slot;
  }

  void give_back(const Slot& slot) {
    std::lock_guard lock(budget_mu);
    if (slot.agent) {
      size_t& all = slot.watcher ? agent_watchers : agent_connections;
      if (all > 0) --all;
    }
    auto it = uses.find(slot.uid);
    if (it == uses.end()) return;
    size_t& mine = slot.watcher ? it->second.watchers : it->second.connections;
    if (mine > 0) --mine;
    // Forget a uid that holds nothing and whose bucket has refilled (so that
    // reconnecting does not refill it early): the table stays as small as the
    // set of uids connected lately.
    const UidUse& u = it->second;
    const auto full_after =
        std::chrono::duration<double>(options.budgets.burst / std::max(options.budgets.rate, 1e-3));
    if (u.connections == 0 && u.watchers == 0 &&
        (u.tokens < 0 || Clock::now() - u.refilled > full_after)) {
      uses.erase(it);
    }
  }

  // One token of `actor`'s request budget; approvers are not metered.
  bool take_token(const Actor& actor) {
    if (actor.approver) return true;
    std::lock_guard lock(budget_mu);
    const Budgets& b = options.budgets;
    UidUse& use = uses[actor.uid];
    auto now = Clock::now();
    if (use.tokens < 0) {
      use.tokens = b.burst;
    } else {
      double secs = std::chrono::duration<double>(now - use.refilled).count();
      use.tokens = std::min(b.burst, use.tokens + secs * b.rate);
    }
    use.refilled = now;
    if (use.tokens < 1) return false;
    use.tokens -= 1;
    return true;
  }

  // Counts a refusal; logs it and tells watchers at most once a second per kind.
  void refused(const char* budget, std::atomic<uint64_t>& counter, const Actor& actor,
               const std::string& why) {
    uint64_t n = ++counter;
    {
      std::lock_guard lock(budget_mu);
      auto now = Clock::now();
      auto& last = last_notice[budget];
      if (last != Clock::time_point{} && now - last < std::chrono::seconds(1)) return;
      last = now;
    }
    spdlog::warn("control: refused uid {} pid {}: {} ({} refused so far)", actor.uid, actor.pid,
                 why, n);
    try {
      events.publish({{"type", "budget_refused"},
                      {"budget", budget},
                      {"uid", actor.uid},
                      {"pid", actor.pid},
                      {"message", why},
                      {"count", n}});
    } catch (...) {
    }
  }

  ServerOptions options;
  Dispatcher& dispatcher;
  EventBus& events;

  base::UniqueFd listen_fd;
  base::UniqueFd epoll_fd;
  base::UniqueFd wake_fd;
  char listen_tag = 0;
  char wake_tag = 0;
  std::atomic<bool> stopping{false};
  bool bound = false;
  bool stopped = false;
  ino_t socket_ino = 0;  // to remove our socket file on stop, and never another's
  std::thread loop_thread;
  std::vector<std::thread> workers;
  Clock::time_point accept_paused_until{};
  bool accept_paused = false;

  mutable std::mutex conns_mu;  // guards conns and hands connections over (see Connection)
  std::unordered_map<Connection*, std::unique_ptr<Connection>> conns;

  std::mutex jobs_mu;
  std::condition_variable jobs_cv;
  std::deque<Connection*> jobs;

  mutable std::mutex watchers_mu;
  std::list<Watcher> watchers;

  // --- setup -------------------------------------------------------------

  void bind_socket() {
    const std::string& path = options.socket_path;
    sockaddr_un addr = make_address(path);
    auto slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) make_socket_dir(path.substr(0, slash));

    replace_stale_socket(path, addr);

    listen_fd.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!listen_fd) throw_io("socket", errno);
    if (::bind(listen_fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      throw_io("cannot bind control socket " + path, errno);
    }
    if (::chmod(path.c_str(), options.socket_mode) != 0) {
      int err = errno;
      ::unlink(path.c_str());
      throw_io("cannot chmod control socket " + path, err);
    }
    if (options.socket_gid != static_cast<gid_t>(-1) &&
        ::chown(path.c_str(), static_cast<uid_t>(-1), options.socket_gid) != 0) {
      int err = errno;
      ::unlink(path.c_str());
      throw_io(
          "cannot give control socket " + path + " to group " + std::to_string(options.socket_gid),
          err);
    }
    if (::listen(listen_fd.get(), options.backlog) != 0) {
      int err = errno;
      ::unlink(path.c_str());
      throw_io("cannot listen on control socket " + path, err);
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) socket_ino = st.st_ino;
    bound = true;
  }

  // A socket file left by a daemon that died is removed; one that a live daemon
  // answers on is not: two daemons must never fight over one path.
  static void replace_stale_socket(const std::string& path, const sockaddr_un& addr) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) return;
      throw_io("cannot inspect control socket path " + path, errno);
    }
    if (!S_ISSOCK(st.st_mode)) {
      throw Error(Errc::kIoError, "control socket path " + path +
                                      " exists and is not a socket; refusing to replace it");
    }
    base::UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!probe) throw_io("socket", errno);
    if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
      throw Error(Errc::kIoError, "another leasefs daemon is already serving control socket " +
                                      path + " (stop it with `leasefs unmount` first)");
    }
    int err = errno;
    if (err != ECONNREFUSED && err != ENOENT) {
      throw_io("cannot tell whether control socket " + path + " is in use", err);
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      throw_io("cannot remove stale control socket " + path, errno);
    }
    spdlog::info("control: removed stale socket {}", path);
  }

  void start() {
    bind_socket();
    epoll_fd.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_fd) throw_io("epoll_create1", errno);
    wake_fd.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!wake_fd) throw_io("eventfd", errno);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = &listen_tag;
    if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, listen_fd.get(), &ev) != 0) {
      throw_io("epoll_ctl", errno);
    }
    ev.data.ptr = &wake_tag;
    if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, wake_fd.get(), &ev) != 0) {
      throw_io("epoll_ctl", errno);
    }
    size_t n = options.workers == 0 ? 1 : options.workers;
    for (size_t i = 0; i < n; ++i) workers.emplace_back([this] { worker_main(); });
    loop_thread = std::thread([this] { loop_main(); });
    spdlog::info("control: listening on {}", options.socket_path);
  }

  void stop() {
    if (stopped) return;
    stopped = true;
    stopping = true;
    if (wake_fd) {
      uint64_t one = 1;
      ssize_t r = ::write(wake_fd.get(), &one, sizeof(one));
      (void)r;
    }
    if (loop_thread.joinable()) loop_thread.join();
    {
      // Unblock workers stuck writing to a slow peer.
      std::lock_guard lock(conns_mu);
      for (auto& [ptr, conn] : conns) ::shutdown(conn->fd.get(), SHUT_RDWR);
    }
    {
      std::lock_guard lock(jobs_mu);
      jobs.clear();
    }
    jobs_cv.notify_all();
    for (auto& t : workers) {
      if (t.joinable()) t.join();
    }
    workers.clear();
    {
      // Unblock watchers stuck writing to a peer that does not read.
      std::lock_guard lock(watchers_mu);
      for (auto& w : watchers) {
        if (w.fd) ::shutdown(w.fd.get(), SHUT_RDWR);
      }
      for (auto& w : watchers) {
        if (w.thread.joinable()) w.thread.join();
      }
      watchers.clear();
    }
    {
      std::lock_guard lock(conns_mu);
      conns.clear();
    }
    if (listen_fd) {
      listen_fd.reset();
      // Remove our socket file, but only if it is still ours.
      struct stat st {};
      if (bound && ::lstat(options.socket_path.c_str(), &st) == 0 && st.st_ino == socket_ino) {
        ::unlink(options.socket_path.c_str());
      }
    }
  }

  // --- the epoll thread --------------------------------------------------

  void loop_main() {
    std::vector<epoll_event> events_buf(64);
    while (!stopping) {
      int n =
          ::epoll_wait(epoll_fd.get(), events_buf.data(), static_cast<int>(events_buf.size()), 250);
      if (n < 0) {
        if (errno == EINTR) continue;
        spdlog::error("control: epoll_wait: {}", std::strerror(errno));
        break;
      }
      for (int i = 0; i < n && !stopping; ++i) {
        void* tag = events_buf[i].data.ptr;
        if (tag == &wake_tag) {
          uint64_t v = 0;
          ssize_t r = ::read(wake_fd.get(), &v, sizeof(v));
          (void)r;
        } else if (tag == &listen_tag) {
          accept_all();
        } else {
          on_event(static_cast<Connection*>(tag), events_buf[i].events);
        }
      }
      housekeeping();
    }
  }

  void accept_all() {
    while (!stopping) {
      int fd = ::accept4(listen_fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: stop accepting for a moment instead of spinning on
          // a listening socket that stays readable. Waiting clients sit in the backlog.
          spdlog::warn("control: accept: {}; pausing accepts", std::strerror(errno));
          pause_accepting();
        }
        return;
      }
      base::UniqueFd client(fd);
      auto actor = peer_actor(client.get(), options.approvers);
      if (!actor) {
        spdlog::warn("control: dropping a connection whose peer credentials are unknown");
        continue;
      }
      std::string why;
      auto slot = take_slot(*actor, false, connection_count(), &why);
      if (!slot) {
        refused("connections", options.counters->connections, *actor, why);
        std::string line = to_line(error_reply(nullptr, Errc::kBusy, why));
        ssize_t r = ::send(client.get(), line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)r;
        continue;
      }
      auto conn = std::make_unique<Connection>();
      conn->slot = std::move(slot);
      conn->fd = std::move(client);
      conn->actor = *actor;
      Connection* raw = conn.get();
      {
        std::lock_guard lock(conns_mu);
        conns.emplace(raw, std::move(conn));
      }
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
      ev.data.ptr = raw;
      if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, raw->fd.get(), &ev) != 0) {
        spdlog::error("control: epoll_ctl add: {}", std::strerror(errno));
        close_connection(raw);
      }
    }
  }

  void pause_accepting() {
    epoll_event ev{};
    ev.events = 0;
    ev.data.ptr = &listen_tag;
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_MOD, listen_fd.get(), &ev);
    accept_paused = true;
    accept_paused_until = Clock::now() + std::chrono::milliseconds(100);
  }

  // Called for an armed connection that fired: the epoll thread owns it.
  void on_event(Connection* conn, uint32_t revents) {
    bool flushing = false;
    {
      // Taking the lock orders this thread after the worker that handed `conn` back.
      std::lock_guard lock(conns_mu);
      assert(!conn->busy);
      flushing = !conn->out.empty();
    }
    if (flushing) {
      on_writable(conn);
    } else {
      on_readable(conn, revents);
    }
  }

  void on_readable(Connection* conn, uint32_t revents) {
    char buf[kReadChunk];
    ssize_t n = ::recv(conn->fd.get(), buf, sizeof(buf), 0);
    bool gone = false;
    {
      std::lock_guard lock(conns_mu);
      if (n > 0) {
        bool was_partial = conn->framer.buffered() > 0 || conn->framer.discarding();
        conn->framer.feed(std::string_view(buf, static_cast<size_t>(n)));
        conn->last_active = Clock::now();
        bool partial = conn->framer.buffered() > 0 || conn->framer.discarding();
        if (!partial) {
          conn->line_started = Clock::time_point{};
        } else if (!was_partial || conn->line_started == Clock::time_point{}) {
          conn->line_started = conn->last_active;
        }
      } else if (n == 0) {
        conn->eof = true;
        // A last request without its newline counts when the peer only shut down
        // its sending side (printf '...' | nc -N): it is still there to read the
        // reply. One that went away entirely (hang-up) gets nothing run.
        if (!(revents & (EPOLLHUP | EPOLLERR))) conn->framer.finish();
      } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        if (revents & (EPOLLERR | EPOLLHUP)) conn->eof = true;
      } else {
        gone = true;  // reset by peer and the like
      }
    }
    if (gone) {
      close_connection(conn);
      return;
    }
    after_io(conn);
  }

  // The rest of a reply is pending: write what the peer takes now.
  void on_writable(Connection* conn) {
    std::string out;
    {
      std::lock_guard lock(conns_mu);
      out.swap(conn->out);
    }
    size_t before = out.size();
    SendResult r = send_now(conn->fd.get(), out);
    if (r == SendResult::kFailed) {
      close_connection(conn);
      return;
    }
    bool pending = !out.empty();
    {
      std::lock_guard lock(conns_mu);
      if (out.size() < before) conn->last_progress = Clock::now();
      conn->out.swap(out);
    }
    if (pending) {
      rearm(conn, EPOLLOUT);
      return;
    }
    after_io(conn);
  }

  // Epoll thread, owning `conn` with nothing left to write: run its complete
  // lines, or close it after EOF, or wait for more input.
  void after_io(Connection* conn) {
    bool has_line = false;
    bool eof = false;
    {
      std::lock_guard lock(conns_mu);
      has_line = conn->framer.has_line();
      eof = conn->eof;
      if (has_line) conn->busy = true;
    }
    if (has_line) {
      {
        // Approvers go first: however many requests the agent queues, a turn,
        // revoke, grant or approve waits for one command at most.
        std::lock_guard lock(jobs_mu);
        if (conn->actor.approver) {
          jobs.push_front(conn);
        } else {
          jobs.push_back(conn);
        }
      }
      jobs_cv.notify_one();
      return;
    }
    if (eof) {
      close_connection(conn);  // gone mid-request, or done: either way, nothing to answer
      return;
    }
    rearm(conn, EPOLLIN | EPOLLRDHUP);
  }

  void housekeeping() {
    auto now = Clock::now();
    if (accept_paused && now >= accept_paused_until) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = &listen_tag;
      ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_MOD, listen_fd.get(), &ev);
      accept_paused = false;
    }
    std::vector<std::unique_ptr<Connection>> idle;
    std::vector<Actor> slow;
    {
      std::lock_guard lock(conns_mu);
      for (auto it = conns.begin(); it != conns.end();) {
        Connection* c = it->first;
        // A reply the peer has not taken any of for write_timeout drops it; a
        // connection with nothing to do is closed after idle_timeout.
        bool expired =
            !c->busy && (c->out.empty() ? now - c->last_active > options.idle_timeout
                                        : now - c->last_progress > options.write_timeout);
        // A line begun and not finished in time: a slow sender holds nothing long.
        bool slow_line = !c->busy && c->line_started != Clock::time_point{} &&
                         now - c->line_started > options.budgets.line_timeout;
        if (slow_line && !expired) {
          expired = true;
          slow.push_back(c->actor);
          std::string line = to_line(error_reply(
              nullptr, Errc::kBadRequest,
              "request line not finished within " +
                  std::to_string(options.budgets.line_timeout.count()) + " ms; closing"));
          ssize_t r = ::send(c->fd.get(), line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          (void)r;
        }
        if (expired) {
          ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, c->fd.get(), nullptr);
          idle.push_back(std::move(it->second));
          it = conns.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (const Actor& a : slow) {
      refused("line_time", options.counters->slow_lines, a,
              "a request line was not finished in time");
    }
    for (auto& c : idle) {
      spdlog::debug("control: closing {} connection from pid {}", c->out.empty() ? "idle" : "slow",
                    c->actor.pid);
    }
    reap_watchers();
  }

  // --- connection ownership ----------------------------------------------

  // Epoll thread: waits for `events` on a connection it owns.
  void rearm(Connection* conn, uint32_t events) {
    epoll_event ev{};
    ev.events = events | EPOLLONESHOT;
    ev.data.ptr = conn;
    if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_MOD, conn->fd.get(), &ev) != 0) {
      close_connection(conn);
    }
  }

  // The caller owns `conn`. Worker side: hands it back to the epoll thread, to
  // read more (EPOLLIN) or to finish writing a reply (EPOLLOUT).
  void release(Connection* conn, uint32_t events = EPOLLIN | EPOLLRDHUP) {
    std::lock_guard lock(conns_mu);
    conn->busy = false;
    conn->last_active = Clock::now();
    conn->last_progress = conn->last_active;
    epoll_event ev{};
    ev.events = events | EPOLLONESHOT;
    ev.data.ptr = conn;
    if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_MOD, conn->fd.get(), &ev) != 0) {
      conns.erase(conn);
    }
  }

  // The caller owns `conn`.
  void close_connection(Connection* conn) {
    std::unique_ptr<Connection> doomed;
    {
      std::lock_guard lock(conns_mu);
      auto it = conns.find(conn);
      if (it == conns.end()) return;
      ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, conn->fd.get(), nullptr);
      doomed = std::move(it->second);
      conns.erase(it);
    }
  }

  // Takes `conn` out of the table (and epoll) and returns its descriptor.
  base::UniqueFd detach(Connection* conn) {
    std::lock_guard lock(conns_mu);
    auto it = conns.find(conn);
    if (it == conns.end()) return {};
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, conn->fd.get(), nullptr);
    base::UniqueFd fd = std::move(conn->fd);
    conns.erase(it);
    return fd;
  }

  size_t connection_count() const {
    std::lock_guard lock(conns_mu);
    return conns.size();
  }

  // --- workers -------------------------------------------------------------

  void worker_main() {
    while (true) {
      Connection* conn = nullptr;
      {
        std::unique_lock lock(jobs_mu);
        jobs_cv.wait(lock, [&] { return stopping || !jobs.empty(); });
        if (stopping) return;
        conn = jobs.front();
        jobs.pop_front();
      }
      serve(conn);
    }
  }

  // Runs every complete line of `conn` in order, then gives it back. A reply the
  // peer cannot take at once is left to the epoll thread to finish, and no more
  // lines are run until it has: a client that does not read holds no worker, and
  // holds at most one reply of memory.
  void serve(Connection* conn) {
    while (!stopping) {
      std::optional<LineFramer::Line> line;
      {
        std::lock_guard lock(conns_mu);
        line = conn->framer.next();
      }
      if (!line) break;
      Dispatcher::Outcome out;
      if (line->too_long) {
        out.reply = error_reply(nullptr, Errc::kLineTooLong,
                                "request line longer than " + std::to_string(kMaxLineBytes) +
                                    " bytes; it was discarded");
      } else if (line->text.find_first_not_of(" \t\r") == std::string::npos) {
        continue;  // blank lines are allowed between requests
      } else if (!take_token(conn->actor)) {
        std::string why = "uid " + std::to_string(conn->actor.uid) + " sends more than " +
                          std::to_string(static_cast<int>(options.budgets.rate)) +
                          " requests per second; slow down and retry";
        refused("request_rate", options.counters->rate, conn->actor, why);
        out.reply = error_reply(nullptr, Errc::kBusy, why);
      } else {
        out = dispatcher.handle_line(line->text, conn->actor);
      }
      if (out.stream) {
        if (!start_watch(conn, out.reply)) return;
        continue;  // refused (too many streams): serve the next line
      }
      if (!reply(conn, to_line(out.reply))) return;
    }
    bool eof = false;
    {
      std::lock_guard lock(conns_mu);
      eof = conn->eof;
    }
    if (eof || stopping) {
      close_connection(conn);
      return;
    }
    release(conn);
  }

  // Worker: writes what the peer takes now. True when all of it went; otherwise
  // `conn` was handed to the epoll thread (to write the rest) or closed.
  bool reply(Connection* conn, std::string data) {
    SendResult r = send_now(conn->fd.get(), data);
    if (r == SendResult::kSent) return true;
    if (r == SendResult::kFailed) {
      close_connection(conn);
      return false;
    }
    {
      std::lock_guard lock(conns_mu);
      conn->out = std::move(data);
    }
    release(conn, EPOLLOUT);
    return false;
  }

  // --- watch streams -------------------------------------------------------

  size_t watcher_count() const {
    std::lock_guard lock(watchers_mu);
    size_t n = 0;
    for (const auto& w : watchers) n += w.done ? 0 : 1;
    return n;
  }

  // Worker: turns `conn` into a watch stream with a thread of its own. True when
  // the stream was refused and `conn` is still the caller's to serve.
  bool start_watch(Connection* conn, const nlohmann::json& ack) {
    reap_watchers();
    std::string why;
    auto slot = take_slot(conn->actor, true, watcher_count(), &why);
    if (!slot) {
      refused("watch_streams", options.counters->watchers, conn->actor, why);
      auto refusal = error_reply(ack.value("id", nlohmann::json()), Errc::kBusy, why);
      return reply(conn, to_line(refusal));
    }
    // Subscribe before the ack, so that every event after the ack is seen.
    auto queue = events.subscribe();
    base::UniqueFd fd = detach(conn);
    if (!fd) {
      events.unsubscribe(queue);
      return false;
    }
    std::lock_guard lock(watchers_mu);
    if (stopping) {
      events.unsubscribe(queue);
      return false;
    }
    Watcher& w = watchers.emplace_back();
    w.slot = std::move(slot);
    w.fd = std::move(fd);
    w.thread = std::thread([this, &w, queue, ack_line = to_line(ack)] {
      // The ack is written here, not by the worker: a peer slow to read it holds
      // this thread only.
      if (write_all(w.fd.get(), ack_line, options.write_timeout)) stream_events(w.fd, queue);
      events.unsubscribe(queue);
      ::shutdown(w.fd.get(), SHUT_RDWR);  // the peer sees the end now; the fd closes when reaped
      w.done = true;
    });
    return false;
  }

  // Until the peer hangs up (or the server stops): one event per line.
  void stream_events(const base::UniqueFd& fd, const std::shared_ptr<EventQueue>& queue) {
    char sink[4096];
    while (!stopping) {
      pollfd p{fd.get(), POLLIN | POLLRDHUP, 0};
      if (::poll(&p, 1, 0) > 0) {
        if (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) return;
        if (p.revents & POLLIN) {
          // A watcher has nothing to say; what it sends is read and ignored.
          ssize_t n = ::recv(fd.get(), sink, sizeof(sink), 0);
          if (n == 0) return;
          if (n < 0 && errno != EAGAIN && errno != EINTR) return;
        }
      }
      auto event = queue->pop(std::chrono::milliseconds(200));
      if (!event) {
        if (queue->closed()) return;
        continue;
      }
      if (!write_all(fd.get(), to_line(*event), options.write_timeout)) return;
    }
  }

  void reap_watchers() {
    std::lock_guard lock(watchers_mu);
    for (auto it = watchers.begin(); it != watchers.end();) {
      if (it->done) {
        if (it->thread.joinable()) it->thread.join();
        it = watchers.erase(it);
      } else {
        ++it;
      }
    }
  }
};

Server::Server(ServerOptions options, Dispatcher& dispatcher, EventBus& events)
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

size_t Server::connection_count() const {
  return impl_->connection_count();
}

size_t Server::watcher_count() const {
  return impl_->watcher_count();
}

}  // namespace leasefs::gate::control

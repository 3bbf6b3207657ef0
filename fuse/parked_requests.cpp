#include "fuse/parked_requests.hpp"

#include <cerrno>
#include <vector>

#include "base/thread_name.hpp"
#include "fuse/caller_signals.hpp"
#include "fuse/libfuse_features.hpp"
#include "fuse/reply.hpp"
#include "gate/process_command.hpp"

namespace leasefs::fuse {

namespace {

// What an approval would grant: the same key, the same request.
std::string ask_key(const NotedRefusal& refusal) {
  std::string key;
  for (const std::string& p : refusal.paths) key.append(p).push_back('\0');
  key.push_back('\1');
  for (const std::string& t : refusal.trees) key.append(t).push_back('\0');
  return key;
}

// Rejections remembered per turn, at most: past it a rejected ask may come back.
constexpr size_t kMaxRejected = 4096;

}  // namespace

ParkedRequests::~ParkedRequests() {
  stop();
}

void ParkedRequests::attach(gate::AskChannel* channel) {
  {
    std::lock_guard lock(mu_);
    channel_ = channel;
    if (!channel_) return;
    if (!worker_.joinable() && !stopping_) {
      worker_ = std::thread([this] {
        base::name_this_thread("parked-asks");
        run();
      });
    }
  }
  // Outside mu_: an answer takes the channel's lock, then mu_.
  channel->attach_waiter(this);
}

void ParkedRequests::note_publication(const gate::GateSnapshot& snapshot) {
  if (snapshot.version < seen_version_) return;
  seen_version_ = snapshot.version;
  const bool in_progress = snapshot.has_task && snapshot.status == gate::TaskStatus::kInProgress;
  if (snapshot.turn != turn_ || !in_progress) {
    // The service closes this turn's requests; what waits ends in run().
    asks_.clear();
    keys_.clear();
    rejected_.clear();
  }
  turn_ = snapshot.turn;
  in_progress_ = in_progress;
}

bool ParkedRequests::open_ask(const std::string& key, bool filed, uint64_t* id) {
  if (auto it = keys_.find(key); it != keys_.end()) {
    *id = it->second;
    asks_[*id].filed |= filed;
    return false;
  }
  *id = ++next_id_;
  keys_.emplace(key, *id);
  asks_.emplace(*id, OpenAsk{key, 0, filed});
  return true;
}

bool ParkedRequests::leave_ask(uint64_t ask) {
  auto it = asks_.find(ask);
  if (it == asks_.end()) return false;  // answered, or of an ended turn
  if (--it->second.waiters > 0 || it->second.filed) return false;
  keys_.erase(it->second.key);
  asks_.erase(it);
  return true;
}

void ParkedRequests::drop_ask(uint64_t ask) {
  if (auto it = asks_.find(ask); it != asks_.end()) {
    keys_.erase(it->second.key);
    asks_.erase(it);
  }
  for (auto& [id, p] : parked_) {
    if (p.ask == ask) p.answer = Answer::kRejected;
  }
}

bool ParkedRequests::park(fuse_req_t req, const gate::GateSnapshot& snapshot, NotedRefusal& refusal,
                          const gate::Caller& caller, Attempt attempt, bool wait, bool polled) {
  if (snapshot.ask_ms <= 0) return false;
  std::vector<std::string> all = refusal.paths;
  all.insert(all.end(), refusal.trees.begin(), refusal.trees.end());
  if (!gate::may_ask(refusal.reason, all)) return false;
  if (!snapshot.has_task || snapshot.status != gate::TaskStatus::kInProgress) return false;
  const std::string key = ask_key(refusal);
  uint64_t ask = 0;
  uint64_t parked = 0;
  bool raise = false;
  gate::AskChannel* channel = nullptr;
  {
    std::lock_guard lock(mu_);
    note_publication(snapshot);
    if (!channel_ || stopping_ || snapshot.turn != turn_ || rejected_.count(key)) return false;
    if (!keys_.count(key) && asks_.size() >= bound_) return false;
    if (wait && parked_.size() >= max_parked_) return false;
    channel = channel_;
    raise = open_ask(key, !wait, &ask);
    if (wait) {
      ++asks_[ask].waiters;
      parked = ++next_id_;
      Parked p;
      p.req = req;
      p.attempt = std::move(attempt);
      p.ask = ask;
      p.deadline = Clock::now() + std::chrono::milliseconds(snapshot.ask_ms);
      p.turn = snapshot.turn;
      p.polled = polled;
      p.caller = fuse_req_ctx(req)->pid;
      parked_.emplace(parked, std::move(p));
    }
  }
  // Unregistered, the entry is left alone by the thread, so `req` stays ours
  // while the callback is set (libfuse may call it right here).
  if (wait) fuse_req_interrupt_func(req, &ParkedRequests::interrupted, this);
  if (raise && !channel->ask({ask, refusal.op, refusal.paths, refusal.trees, caller, snapshot.turn,
                              wait, gate::process_command(caller.pid)})) {
    std::lock_guard lock(mu_);
    parked_.erase(parked);
    drop_ask(ask);
    cv_.notify_all();
    return false;  // the callback stays set until the reply, and finds nothing
  }
  if (!wait) return false;
  {
    std::lock_guard lock(mu_);
    auto it = parked_.find(parked);
    if (stopping_ || it == parked_.end()) {
      // Stopping: the thread may be gone; the caller replies, once.
      if (it != parked_.end()) parked_.erase(it);
      return false;
    }
    it->second.report = std::move(refusal.report);
    it->second.registered = true;
  }
  cv_.notify_all();
  return true;
}

void ParkedRequests::interrupted(fuse_req_t req, void* self_ptr) noexcept {
  auto* self = static_cast<ParkedRequests*>(self_ptr);
  {
    std::lock_guard lock(self->mu_);
    for (auto& [id, p] : self->parked_) {
      if (p.req == req) p.interrupted = true;
    }
  }
  self->cv_.notify_all();
}

void ParkedRequests::on_answer(uint64_t ask, bool approved) noexcept {
  {
    std::lock_guard lock(mu_);
    auto it = asks_.find(ask);
    if (it == asks_.end()) return;  // already ended (timed out, interrupted, the turn)
    if (!approved && rejected_.size() < kMaxRejected) rejected_.insert(it->second.key);
    keys_.erase(it->second.key);
    asks_.erase(it);
    for (auto& [id, p] : parked_) {
      if (p.ask == ask) p.answer = approved ? Answer::kApproved : Answer::kRejected;
    }
  }
  cv_.notify_all();
}

void ParkedRequests::on_published(const gate::GateSnapshot& snapshot) noexcept {
  {
    std::lock_guard lock(mu_);
    note_publication(snapshot);
  }
  cv_.notify_all();
}

size_t ParkedRequests::size() const {
  std::lock_guard lock(mu_);
  return parked_.size();
}

void ParkedRequests::stop() noexcept {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (channel_) channel_->attach_waiter(nullptr);
}

ParkedRequests::Outcome ParkedRequests::outcome(const Parked& p, Clock::time_point now,
                                                gate::AskEnd* end) const {
  // park() is still setting it up, and replies itself if it finds us stopping.
  if (!p.registered) return Outcome::kWaiting;
  if (stopping_) {
    *end = gate::AskEnd::kStopped;
    return Outcome::kEnded;
  }
  if (p.interrupted) {
    *end = gate::AskEnd::kInterrupted;
    return Outcome::kEnded;
  }
  if (p.turn != turn_ || !in_progress_) {
    *end = gate::AskEnd::kEndOfTurn;
    return Outcome::kEnded;
  }
  if (p.answer == Answer::kApproved) return Outcome::kRunAgain;
  if (p.answer == Answer::kRejected) return Outcome::kRejected;
  if (now >= p.deadline) {
    *end = gate::AskEnd::kTimedOut;
    return Outcome::kEnded;
  }
  return Outcome::kWaiting;
}

void ParkedRequests::finish(Parked p, Outcome outcome, gate::AskEnd end, bool ask_ended) noexcept {
  switch (outcome) {
    case Outcome::kRunAgain:
      p.attempt(p.req);
      return;
    case Outcome::kRejected:
      if (p.report) p.report();
      reply_status(p.req, -EACCES);
      return;
    case Outcome::kEnded:
      if (p.report) p.report();
      reply_status(p.req, end == gate::AskEnd::kInterrupted ? -EINTR : -EACCES);
      if (ask_ended) channel_->ended(p.ask, end);
      return;
    case Outcome::kWaiting:
      return;
  }
}

void ParkedRequests::run() noexcept {
  struct Done {
    Parked parked;
    Outcome outcome;
    gate::AskEnd end;
    bool ask_ended;
  };
  std::unique_lock lock(mu_);
  for (;;) {
    const auto now = Clock::now();
    auto next = Clock::time_point::max();
    std::vector<Done> done;
    for (auto it = parked_.begin(); it != parked_.end();) {
      if (it->second.polled && it->second.registered && !it->second.interrupted) {
        it->second.interrupted = signal_pending(it->second.caller);
      }
      gate::AskEnd end = gate::AskEnd::kTimedOut;
      const Outcome o = outcome(it->second, now, &end);
      if (o != Outcome::kWaiting) {
        const bool ask_ended = o == Outcome::kEnded && leave_ask(it->second.ask);
        done.push_back({std::move(it->second), o, end, ask_ended});
        it = parked_.erase(it);
        continue;
      }
      next = std::min(next, it->second.deadline);
      if (it->second.polled) next = std::min(next, now + kSignalPoll);
      ++it;
    }
    if (!done.empty()) {
      lock.unlock();
      for (auto& d : done) finish(std::move(d.parked), d.outcome, d.end, d.ask_ended);
      lock.lock();
      continue;
    }
    if (stopping_) return;
    if (next == Clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, next);
    }
  }
}

}  // namespace leasefs::fuse

#include "fuse/parked_requests.hpp"

#include <cerrno>
#include <vector>

#include "base/thread_name.hpp"
#include "fuse/reply.hpp"

namespace leasefs::fuse {

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
  turn_ = snapshot.turn;
  in_progress_ = snapshot.has_task && snapshot.status == gate::TaskStatus::kInProgress;
}

bool ParkedRequests::park(fuse_req_t req, const gate::GateSnapshot& snapshot, NotedRefusal& refusal,
                          const gate::Caller& caller, Attempt attempt) {
  if (snapshot.ask_ms <= 0) return false;
  std::vector<std::string> all = refusal.paths;
  all.insert(all.end(), refusal.trees.begin(), refusal.trees.end());
  if (!gate::may_ask(refusal.reason, all)) return false;
  if (!snapshot.has_task || snapshot.status != gate::TaskStatus::kInProgress) return false;
  uint64_t id = 0;
  gate::AskChannel* channel = nullptr;
  {
    std::lock_guard lock(mu_);
    note_publication(snapshot);
    if (!channel_ || stopping_ || snapshot.turn != turn_ || parked_.size() >= bound_) return false;
    channel = channel_;
    id = ++next_id_;
    Parked p;
    p.req = req;
    p.attempt = std::move(attempt);
    p.deadline = Clock::now() + std::chrono::milliseconds(snapshot.ask_ms);
    p.turn = snapshot.turn;
    parked_.emplace(id, std::move(p));
  }
  // Unregistered, the entry is left alone by the thread, so `req` stays ours
  // while the callback is set (libfuse may call it right here).
  fuse_req_interrupt_func(req, &ParkedRequests::interrupted, this);
  gate::Ask ask{id, refusal.op, refusal.paths, refusal.trees, caller, snapshot.turn};
  if (!channel->ask(std::move(ask))) {
    std::lock_guard lock(mu_);
    parked_.erase(id);
    return false;  // the callback stays set until the reply, and finds nothing
  }
  {
    std::lock_guard lock(mu_);
    if (auto it = parked_.find(id); it != parked_.end()) {
      it->second.report = std::move(refusal.report);
      it->second.registered = true;
    }
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

void ParkedRequests::on_answer(uint64_t id, bool approved) noexcept {
  {
    std::lock_guard lock(mu_);
    auto it = parked_.find(id);
    if (it == parked_.end()) return;  // already ended (timed out, interrupted)
    it->second.answer = approved ? Answer::kApproved : Answer::kRejected;
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
  if (stopping_) {
    *end = gate::AskEnd::kStopped;
    return Outcome::kEnded;
  }
  if (!p.registered) return Outcome::kWaiting;  // park() is still setting it up
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

void ParkedRequests::finish(uint64_t id, Parked p, Outcome outcome, gate::AskEnd end) noexcept {
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
      channel_->ended(id, end);
      return;
    case Outcome::kWaiting:
      return;
  }
}

void ParkedRequests::run() noexcept {
  struct Done {
    uint64_t id;
    Parked parked;
    Outcome outcome;
    gate::AskEnd end;
  };
  std::unique_lock lock(mu_);
  for (;;) {
    const auto now = Clock::now();
    auto next = Clock::time_point::max();
    std::vector<Done> done;
    for (auto it = parked_.begin(); it != parked_.end();) {
      gate::AskEnd end = gate::AskEnd::kTimedOut;
      const Outcome o = outcome(it->second, now, &end);
      if (o != Outcome::kWaiting) {
        done.push_back({it->first, std::move(it->second), o, end});
        it = parked_.erase(it);
        continue;
      }
      next = std::min(next, it->second.deadline);
      ++it;
    }
    if (!done.empty()) {
      lock.unlock();
      for (auto& d : done) finish(d.id, std::move(d.parked), d.outcome, d.end);
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

// Ask mode's waiting room: FUSE requests the gate refused, parked without a reply
// until a person answers (gate/ask.hpp). No worker thread waits: the operation's
// handler returns, and one thread of this class later runs the operation again
// (approved) or replies EACCES (rejected, timed out, end of turn, daemon stopping)
// or EINTR (the caller was signalled: the kernel sent FUSE_INTERRUPT).
//
// Replies come only from that thread. libfuse may call the interrupt callback
// with the request's lock held, or from inside fuse_req_interrupt_func itself,
// where replying would free the request under it; so the callback only marks
// the request, and the thread replies.
#pragma once

#include <fuse_lowlevel.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "fuse/refusal_note.hpp"
#include "gate/ask.hpp"

namespace leasefs::fuse {

class ParkedRequests final : public gate::AskWaiter {
 public:
  // Runs the operation again and replies, whatever happens.
  using Attempt = std::function<void(fuse_req_t)>;
  static constexpr size_t kDefaultBound = 16;

  explicit ParkedRequests(size_t bound = kDefaultBound) : bound_(bound) {}
  ~ParkedRequests() override;
  ParkedRequests(const ParkedRequests&) = delete;
  ParkedRequests& operator=(const ParkedRequests&) = delete;

  // Before mounting: where asks go (nullptr: ask mode is off whatever the snapshot
  // says). Starts the replying thread.
  void attach(gate::AskChannel* channel);

  // Parks `req` when `snapshot` has ask mode on, the refusal may be asked of a
  // person (gate::may_ask) and fewer than the bound are parked. True: a reply will
  // come from this class. False: nothing happened, the caller fails the request.
  // Parked, it takes `refusal.report`, made when the wait ends without letting
  // the operation through (rejected, timed out, end of turn, killed, stopping).
  bool park(fuse_req_t req, const gate::GateSnapshot& snapshot, NotedRefusal& refusal,
            const gate::Caller& caller, Attempt attempt);

  void on_answer(uint64_t id, bool approved) noexcept override;
  // A publication: asks of an earlier turn, or of a task no longer in progress, end.
  void on_published(const gate::GateSnapshot& snapshot) noexcept;
  // Ends every parked request (EACCES) and joins the thread; later parks fail.
  // Call once the session loop has returned, before the session is destroyed.
  void stop() noexcept;

  size_t size() const;

 private:
  using Clock = std::chrono::steady_clock;
  enum class Answer { kNone, kApproved, kRejected };
  struct Parked {
    fuse_req_t req = nullptr;
    Attempt attempt;
    std::function<void()> report;  // the refusal, reported if the wait fails it
    Clock::time_point deadline;
    uint64_t turn = 0;
    bool registered = false;  // its interrupt callback is set: the thread may reply
    bool interrupted = false;
    Answer answer = Answer::kNone;
  };

  static void interrupted(fuse_req_t req, void* self) noexcept;
  void run() noexcept;
  // What ends a parked request, if anything yet (caller holds mu_).
  enum class Outcome { kWaiting, kRunAgain, kRejected, kEnded };
  Outcome outcome(const Parked& parked, Clock::time_point now, gate::AskEnd* end) const;
  // Replies to one request taken off the table (outside the lock).
  void finish(uint64_t id, Parked parked, Outcome outcome, gate::AskEnd end) noexcept;
  void note_publication(const gate::GateSnapshot& snapshot);  // caller holds mu_

  const size_t bound_;
  gate::AskChannel* channel_ = nullptr;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<uint64_t, Parked> parked_;
  uint64_t next_id_ = 0;
  uint64_t seen_version_ = 0;  // the newest publication seen, and what it said
  uint64_t turn_ = 0;
  bool in_progress_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace leasefs::fuse

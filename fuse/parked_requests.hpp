// Ask mode's waiting room: FUSE requests the gate refused, put to a person
// (gate/ask.hpp). Only an open for writing of an existing file waits (parks): the
// kernel holds no directory lock for it. Every other refused operation (create,
// mkdir, unlink, rename, link, setattr, the xattr calls, ...) runs with a
// directory's or the file's lock held in the kernel, so it is answered EACCES at
// once and its request is filed: once a person approves it, the tool's retry goes
// through. No worker thread waits: a parked handler returns, and one thread of
// this class later runs the operation again (approved) or replies EACCES
// (rejected, timed out, end of turn, daemon stopping) or EINTR (the caller was
// signalled: the kernel sent FUSE_INTERRUPT).
//
// One ask per distinct grant: asks for the same paths this turn share one request,
// so a burst of the same operation costs the approver one decision; a rejected one
// is not asked again this turn.
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
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include "fuse/refusal_note.hpp"
#include "gate/ask.hpp"

namespace leasefs::fuse {

class ParkedRequests final : public gate::AskWaiter {
 public:
  // Runs the operation again and replies, whatever happens.
  using Attempt = std::function<void(fuse_req_t)>;
  // Unanswered asks at once (distinct requests in front of the approver).
  static constexpr size_t kDefaultBound = 16;
  // Requests parked at once, over all asks: memory only, no thread each (over
  // /dev/fuse; over io_uring each keeps a ring entry, fuse/transport.hpp).
  static constexpr size_t kMaxParked = 4096;
  // How often a request parked over io_uring looks for a signal to its caller.
  static constexpr std::chrono::milliseconds kSignalPoll{10};

  explicit ParkedRequests(size_t bound = kDefaultBound) : bound_(bound) {}
  ~ParkedRequests() override;
  ParkedRequests(const ParkedRequests&) = delete;
  ParkedRequests& operator=(const ParkedRequests&) = delete;

  // Before mounting: where asks go (nullptr: ask mode is off whatever the snapshot
  // says). Starts the replying thread.
  void attach(gate::AskChannel* channel);
  // Before mounting: fewer requests park at once than kMaxParked; past `n` a
  // refused open fails at once, as past the bound.
  void set_max_parked(size_t n) noexcept { max_parked_ = n; }

  // Puts a refusal to a person when `snapshot` has ask mode on, the refusal may
  // be asked (gate::may_ask), it is not one a person already rejected this turn,
  // and fewer than the bound are unanswered. With `wait` (an open for writing of
  // an existing file), parks `req`: true, and a reply will come from this class.
  // Parked, it takes `refusal.report`, made when the wait ends without letting
  // the operation through. Without, files the request only and returns false. False: the caller
  // fails the request at once.
  // `polled`: no interrupt reaches `req`, so its caller's signals are looked at.
  bool park(fuse_req_t req, const gate::GateSnapshot& snapshot, NotedRefusal& refusal,
            const gate::Caller& caller, Attempt attempt, bool wait, bool polled);

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
    uint64_t ask = 0;              // the ask it waits on
    std::function<void()> report;  // the refusal, reported if the wait fails it
    Clock::time_point deadline;
    uint64_t turn = 0;
    bool registered = false;  // its interrupt callback is set: the thread may reply
    bool interrupted = false;
    // No interrupt reaches it (TransportInUse::interrupts_reach): the thread
    // looks at the caller's signals instead (caller_signals.hpp).
    bool polled = false;
    pid_t caller = 0;
    Answer answer = Answer::kNone;
  };
  // An unanswered ask of this turn: its request stays open while someone waits
  // on it, or while a refused operation's retry may want it (filed).
  struct OpenAsk {
    std::string key;
    size_t waiters = 0;
    bool filed = false;
  };
  // A refused operation that files its ask sets `filed`; true when it is new.
  bool open_ask(const std::string& key, bool filed, uint64_t* id);  // caller holds mu_
  // A waiter of `ask` is gone; true when the ask ends with it.
  bool leave_ask(uint64_t ask);  // caller holds mu_
  // An ask that could not be put to a person: everyone on it is answered no.
  void drop_ask(uint64_t ask);  // caller holds mu_

  static void interrupted(fuse_req_t req, void* self) noexcept;
  void run() noexcept;
  // What ends a parked request, if anything yet (caller holds mu_).
  enum class Outcome { kWaiting, kRunAgain, kRejected, kEnded };
  Outcome outcome(const Parked& parked, Clock::time_point now, gate::AskEnd* end) const;
  // Replies to one request taken off the table (outside the lock); `ask_ended`:
  // it was the last on its ask, whose request now closes.
  void finish(Parked parked, Outcome outcome, gate::AskEnd end, bool ask_ended) noexcept;
  void note_publication(const gate::GateSnapshot& snapshot);  // caller holds mu_

  const size_t bound_;
  size_t max_parked_ = kMaxParked;
  gate::AskChannel* channel_ = nullptr;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<uint64_t, Parked> parked_;
  std::unordered_map<uint64_t, OpenAsk> asks_;  // this turn's unanswered asks, by id
  // Keyed by paths the agent names: ordered, so no choice of names makes a lookup
  // walk them all (journal.hpp says why).
  std::map<std::string, uint64_t, std::less<>> keys_;  // the same, by the grant they would be
  std::set<std::string, std::less<>> rejected_;        // this turn's, never asked again
  uint64_t next_id_ = 0;
  uint64_t seen_version_ = 0;  // the newest publication seen, and what it said
  uint64_t turn_ = 0;
  bool in_progress_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace leasefs::fuse

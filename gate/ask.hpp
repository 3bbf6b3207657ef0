// Ask mode: a mutation the gate refused may wait for a person instead of failing.
//
// The filesystem parks the request (it does not reply yet) and raises an Ask; the
// control plane turns it into a request in the ledger, which approvers see in
// status and watch. An approval becomes a grant for this turn naming exactly the
// Ask's paths, and the filesystem runs the operation again; a rejection, the
// timeout, the end of the turn or the caller going away fails it with EACCES
// (EINTR for the caller going away). The channel carries both directions, so that
// neither side includes the other.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "gate/decision.hpp"
#include "gate/op.hpp"

namespace leasefs::gate {

// The longest a parked request may wait (an hour): longer is a hung tool.
inline constexpr int64_t kMaxAskMs = int64_t{3600} * 1000;

struct Ask {
  uint64_t id = 0;  // the filesystem's, unique while the daemon runs
  Op op = Op::kCreate;
  std::vector<std::string> paths;  // relative to the root; literal, never globs
  std::vector<std::string> trees;  // directories whose whole subtree the operation moves
  Caller caller;
  uint64_t turn = 0;  // the turn it was refused in
  bool waits = true;  // the operation waits (an open); else it failed and its retry will ask
  // The caller's command line, read while it is still in the call: a refused
  // caller may have exited by the time the request is filed.
  std::string command;
};

// Why a parked request ended on the filesystem's side.
enum class AskEnd : uint8_t {
  kTimedOut,     // nobody answered in time
  kInterrupted,  // the caller was signalled (killed) while it waited
  kEndOfTurn,    // the turn moved on, or the task left in_progress
  kStopped,      // the daemon is stopping
};

std::string_view to_string(AskEnd end) noexcept;

// Whether a refusal for `reason` of `paths` may be asked of a person: only a
// missing, stale or too narrow lease; never .longrun (no grant opens it), a path
// the gate could not express, a name a glob would read as a pattern (a file
// called `*` must not become a grant for everything), or one that is not UTF-8
// (a grant, JSON text, would name another path).
bool may_ask(DenyReason reason, const std::vector<std::string>& paths) noexcept;

// The control plane's side.
class AskDesk {
 public:
  virtual ~AskDesk() = default;
  // A new ask; must queue and return (called from a filesystem thread).
  virtual void on_ask(Ask ask) noexcept = 0;
  // The filesystem stopped waiting for `id`.
  virtual void on_ask_ended(uint64_t id, AskEnd end) noexcept = 0;
};

// The filesystem's side.
class AskWaiter {
 public:
  virtual ~AskWaiter() = default;
  // A person answered (or the ask could not be put to one: approved false). Must
  // queue and return.
  virtual void on_answer(uint64_t id, bool approved) noexcept = 0;
};

// Both directions. Each side attaches itself and detaches (nullptr) before it goes;
// a call in progress finishes before detaching returns.
class AskChannel {
 public:
  void attach_desk(AskDesk* desk) noexcept;
  void attach_waiter(AskWaiter* waiter) noexcept;

  // Filesystem to control plane. False when no desk listens (then nothing was
  // asked and the caller fails the operation at once).
  bool ask(Ask ask) noexcept;
  void ended(uint64_t id, AskEnd end) noexcept;
  // Control plane to filesystem.
  void answer(uint64_t id, bool approved) noexcept;

 private:
  std::mutex mu_;  // held during calls, so detaching waits for them
  AskDesk* desk_ = nullptr;
  AskWaiter* waiter_ = nullptr;
};

}  // namespace leasefs::gate

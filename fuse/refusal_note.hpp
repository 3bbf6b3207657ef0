// The gate's refusal of the operation this thread is running, kept so that ask
// mode can put it to a person (fuse/parked_requests.hpp). A note is active for
// one attempt of one operation (attempt_or_park); a refusal outside one is only
// reported, as always.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gate/decision.hpp"
#include "gate/op.hpp"

namespace leasefs::fuse {

struct NotedRefusal {
  gate::Op op = gate::Op::kCreate;
  gate::DenyReason reason = gate::DenyReason::kNone;
  std::vector<std::string> paths;  // what a grant would have to name, literally
  std::vector<std::string> trees;  // directories whose whole subtree it would have to name
  // Reports the refusal (report/reporter.hpp). Held while the operation may still be
  // parked: a write ask mode lets through after approval was no refusal.
  std::function<void()> report;
};

class RefusalNote {
 public:
  RefusalNote() noexcept;  // becomes this thread's note until destroyed
  ~RefusalNote();
  RefusalNote(const RefusalNote&) = delete;
  RefusalNote& operator=(const RefusalNote&) = delete;

  // Whether this thread has a note open (so callers build paths only when needed).
  static bool active() noexcept;
  // Keeps the refusal in this thread's note, if one is open; the last one wins
  // (an earlier one is reported then).
  static void record(NotedRefusal refusal);
  // Reports the refusal held, if any (the operation fails now); the note also
  // does when it closes, so no refusal goes unreported.
  void report() noexcept;

  std::optional<NotedRefusal>& refusal() noexcept { return refusal_; }

 private:
  RefusalNote* previous_;
  std::optional<NotedRefusal> refusal_;
};

}  // namespace leasefs::fuse

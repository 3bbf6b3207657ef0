// The journal's use cases: `diff` (anyone who may read status) and `undo` (an
// approver action, recorded in the audit through an event before and after it
// runs, recorded in the ledger before it runs, performed on the backing tree and itself journaled
// in the current turn).
#pragma once

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gate/actor.hpp"
#include "journal/journal.hpp"
#include "memory/ledger.hpp"
#include "report/event_bus.hpp"
#include "service/results.hpp"

namespace leasefs::service {

class Service;

struct DiffArgs {
  std::optional<uint64_t> turn;  // default: the current turn
  std::vector<std::string> paths;
  bool stat = false;
};

struct PruneArgs {
  uint64_t keep = 0;
  bool dry_run = false;
  std::string reason;
};

struct UndoArgs {
  uint64_t turn = 0;
  std::vector<std::string> paths;
  bool force = false;
  bool dry_run = false;
  std::string reason;
};

class JournalUseCases {
 public:
  // `ledger` may be null (tests of the journal alone); with one, an undo is
  // refused unless the ledger records it first.
  JournalUseCases(Service& service, journal::Journal& journal, report::EventBus& events,
                  memory::Ledger* ledger);

  // Called for each path the undo changes, before and after (kernel caches).
  void set_touch(std::function<void(const std::string&)> fn) { touch_ = std::move(fn); }

  DiffResult diff(const DiffArgs& args, const gate::Actor& actor);
  UndoResult undo(const UndoArgs& args, const gate::Actor& actor);
  // Deletes older turns' journal (an approver action, audited): the one way to
  // take back the room it holds on a full disk.
  PruneResult prune(const PruneArgs& args, const gate::Actor& actor);
  // For status: the journal's turn, what it holds and what it could not keep.
  JournalStatus status();

 private:
  Service& service_;
  journal::Journal& journal_;
  report::EventBus& events_;
  memory::Ledger* ledger_;
  std::function<void(const std::string&)> touch_;
  std::mutex undo_mu_;  // one undo at a time
};

}  // namespace leasefs::service

// Keeps the per-uid budgets of budget.hpp: who holds how many connections and
// watch streams, each uid's request bucket, and the counting, logging and
// publishing of refusals. Thread-safe; the server's event loop is its main user.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "control/budget.hpp"
#include "gate/actor.hpp"
#include "report/event_bus.hpp"

namespace leasefs::control {

class UidBudgets {
 public:
  // One unit of a uid's budget (a connection or a watch stream), given back
  // when the slot goes, whichever way it goes.
  class Slot {
   public:
    ~Slot();
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    friend class UidBudgets;
    Slot(UidBudgets* owner, uid_t uid, bool watcher, bool agent)
        : owner_(owner), uid_(uid), watcher_(watcher), agent_(agent) {}
    UidBudgets* owner_;
    uid_t uid_;
    bool watcher_;
    bool agent_;  // counted in the non-approvers' total too
  };

  // `max_*` bound everybody together; `budgets` the non-approvers.
  UidBudgets(Budgets budgets, size_t max_connections, size_t max_watchers,
             std::shared_ptr<BudgetCounters> counters, report::EventBus& events);

  // A slot for `actor` while `in_use` of the kind are held, or null with `*why`
  // set (and the refusal counted) when its budget is spent.
  std::unique_ptr<Slot> take_connection(const gate::Actor& actor, size_t in_use, std::string* why);
  std::unique_ptr<Slot> take_watcher(const gate::Actor& actor, size_t in_use, std::string* why);
  // One token of `actor`'s request budget; approvers are not metered. When
  // spent, false with `*why` set and the refusal counted.
  bool take_request(const gate::Actor& actor, std::string* why);
  // A line begun and not finished within the line timeout: counted.
  void slow_line(const gate::Actor& actor);

  const Budgets& budgets() const noexcept { return budgets_; }

 private:
  struct UidUse {
    size_t connections = 0;
    size_t watchers = 0;
    double tokens = -1;  // < 0: a full bucket, not yet touched
    std::chrono::steady_clock::time_point refilled{};
  };

  std::unique_ptr<Slot> take_slot(const gate::Actor& actor, bool watcher, size_t in_use,
                                  std::string* why);
  void give_back(const Slot& slot);
  // Counts a refusal; logs it and tells watchers at most once a second per kind.
  void refused(const char* budget, std::atomic<uint64_t>& counter, const gate::Actor& actor,
               const std::string& why);

  Budgets budgets_;
  size_t max_connections_;
  size_t max_watchers_;
  std::shared_ptr<BudgetCounters> counters_;
  report::EventBus& events_;

  std::mutex mu_;  // guards uses_, the totals and last_notice_
  std::unordered_map<uid_t, UidUse> uses_;
  size_t agent_connections_ = 0;  // held by non-approvers, all uids together
  size_t agent_watchers_ = 0;
  std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> last_notice_;
};

}  // namespace leasefs::control

#include "control/uid_budgets.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace leasefs::control {

using Clock = std::chrono::steady_clock;

UidBudgets::Slot::~Slot() {
  owner_->give_back(*this);
}

UidBudgets::UidBudgets(Budgets budgets, size_t max_connections, size_t max_watchers,
                       std::shared_ptr<BudgetCounters> counters, report::EventBus& events)
    : budgets_(budgets),
      max_connections_(max_connections),
      max_watchers_(max_watchers),
      counters_(std::move(counters)),
      events_(events) {}

std::unique_ptr<UidBudgets::Slot> UidBudgets::take_connection(const gate::Actor& actor,
                                                              size_t in_use, std::string* why) {
  auto slot = take_slot(actor, false, in_use, why);
  if (!slot) refused("connections", counters_->connections, actor, *why);
  return slot;
}

std::unique_ptr<UidBudgets::Slot> UidBudgets::take_watcher(const gate::Actor& actor, size_t in_use,
                                                           std::string* why) {
  auto slot = take_slot(actor, true, in_use, why);
  if (!slot) refused("watch_streams", counters_->watchers, actor, *why);
  return slot;
}

std::unique_ptr<UidBudgets::Slot> UidBudgets::take_slot(const gate::Actor& actor, bool watcher,
                                                        size_t in_use, std::string* why) {
  std::lock_guard lock(mu_);
  size_t max = watcher ? max_watchers_ : max_connections_;
  const char* what = watcher ? "watch streams" : "control connections";
  if (in_use >= max) {
    *why = "too many " + std::string(what) + " (" + std::to_string(max) + "); retry later";
    return nullptr;
  }
  UidUse& use = uses_[actor.uid];
  if (!actor.approver) {
    size_t reserved = watcher ? budgets_.reserved_watchers : budgets_.reserved_connections;
    size_t per_uid = watcher ? budgets_.watchers_per_uid : budgets_.connections_per_uid;
    size_t& mine = watcher ? use.watchers : use.connections;
    size_t& all = watcher ? agent_watchers_ : agent_connections_;
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
  return std::unique_ptr<Slot>(new Slot(this, actor.uid, watcher, !actor.approver));
}

void UidBudgets::give_back(const Slot& slot) {
  std::lock_guard lock(mu_);
  if (slot.agent_) {
    size_t& all = slot.watcher_ ? agent_watchers_ : agent_connections_;
    if (all > 0) --all;
  }
  auto it = uses_.find(slot.uid_);
  if (it == uses_.end()) return;
  size_t& mine = slot.watcher_ ? it->second.watchers : it->second.connections;
  if (mine > 0) --mine;
  // Forget a uid that holds nothing and whose bucket has refilled (so that
  // reconnecting does not refill it early): the table stays as small as the
  // set of uids connected lately.
  const UidUse& u = it->second;
  const auto full_after =
      std::chrono::duration<double>(budgets_.burst / std::max(budgets_.rate, 1e-3));
  if (u.connections == 0 && u.watchers == 0 &&
      (u.tokens < 0 || Clock::now() - u.refilled > full_after)) {
    uses_.erase(it);
  }
}

bool UidBudgets::take_request(const gate::Actor& actor, std::string* why) {
  if (actor.approver) return true;
  {
    std::lock_guard lock(mu_);
    UidUse& use = uses_[actor.uid];
    auto now = Clock::now();
    if (use.tokens < 0) {
      use.tokens = budgets_.burst;
    } else {
      double secs = std::chrono::duration<double>(now - use.refilled).count();
      use.tokens = std::min(budgets_.burst, use.tokens + secs * budgets_.rate);
    }
    use.refilled = now;
    if (use.tokens >= 1) {
      use.tokens -= 1;
      return true;
    }
  }
  *why = "uid " + std::to_string(actor.uid) + " sends more than " +
         std::to_string(static_cast<int>(budgets_.rate)) +
         " requests per second; slow down and retry";
  refused("request_rate", counters_->rate, actor, *why);
  return false;
}

void UidBudgets::slow_line(const gate::Actor& actor) {
  refused("line_time", counters_->slow_lines, actor, "a request line was not finished in time");
}

void UidBudgets::refused(const char* budget, std::atomic<uint64_t>& counter,
                         const gate::Actor& actor, const std::string& why) {
  uint64_t n = ++counter;
  {
    std::lock_guard lock(mu_);
    auto now = Clock::now();
    auto& last = last_notice_[budget];
    if (last != Clock::time_point{} && now - last < std::chrono::seconds(1)) return;
    last = now;
  }
  spdlog::warn("control: refused uid {} pid {}: {} ({} refused so far)", actor.uid, actor.pid, why,
               n);
  try {
    events_.publish({{"type", "budget_refused"},
                     {"budget", budget},
                     {"uid", actor.uid},
                     {"pid", actor.pid},
                     {"message", why},
                     {"count", n}});
  } catch (...) {
  }
}

}  // namespace leasefs::control

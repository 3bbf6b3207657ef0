// Per-uid budgets of the control socket, and what they refused.
//
// The agent may open connections, watch streams and send requests as fast as it
// likes; whatever it holds, root and the configured approvers keep capacity of
// their own (sshd's MaxStartups and systemd's per-uid limits in spirit):
//
//   connections   at most `connections_per_uid` per non-approver uid, and all
//                 non-approvers together at most max_connections - reserved
//   watch streams likewise, `watchers_per_uid` and max_watchers - reserved
//   requests      a token bucket per non-approver uid (`rate` per second,
//                 `burst` at once); past it, a cheap `busy` reply
//   lines         a request line must be finished within `line_timeout` of its
//                 first byte (a half-sent line holds nothing for long)
//
// Approvers' requests also go to the front of the workers' queue. Every refusal
// is counted here (shown by `status`), logged and published as a
// `budget_refused` event, the last two at most once a second per budget.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace leasefs::control {

struct Budgets {
  size_t connections_per_uid = 64;
  size_t reserved_connections = 64;
  size_t watchers_per_uid = 8;
  size_t reserved_watchers = 8;
  double rate = 200.0;  // requests per second, per non-approver uid
  double burst = 400.0;
  std::chrono::milliseconds line_timeout{10'000};
};

struct BudgetCounters {
  std::atomic<uint64_t> connections{0};
  std::atomic<uint64_t> watchers{0};
  std::atomic<uint64_t> rate{0};
  std::atomic<uint64_t> slow_lines{0};

  // Member by member: an initializer list builds a two-element array per member
  // first, and every status reads these.
  nlohmann::json to_json() const {
    nlohmann::json j = nlohmann::json::object();
    j["connections"] = connections.load();
    j["watch_streams"] = watchers.load();
    j["request_rate"] = rate.load();
    j["unfinished_lines"] = slow_lines.load();
    return j;
  }
};

}  // namespace leasefs::control

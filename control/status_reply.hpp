// `status`'s reply, rendered and serialized again only when something it shows
// has changed. A person decides on what status shows, so a stale reply is never
// acceptable: the text is kept together with the exact values it was made from
// (a StatusView), and handed out again only for a view equal to that one in every
// field. The comparison is the structs' defaulted ==, so a field added to the
// report later is compared too; the values are read afresh for every request
// (Service::status, the budgets' counters, the journal's summary), so only the
// rendering is saved. JSON inside the view (refusals, the file plane) compares
// as nlohmann's == does: equal values, whose text could differ only in how an
// equal number is written (1 and 1.0).
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "service/results.hpp"

namespace leasefs::control {

// Everything the reply to `status` is rendered from (control/render.cpp).
struct StatusView {
  service::StatusReport report;
  nlohmann::json budget_refusals;                 // null when the server counts none
  std::optional<service::JournalStatus> journal;  // when the daemon keeps one

  bool operator==(const StatusView&) const = default;
};

class StatusReplies {
 public:
  // The reply's `result` for `view`, as base::json_text writes it. Never waits:
  // when another thread holds the last text, this one renders its own.
  std::shared_ptr<const std::string> text(StatusView view);

 private:
  std::mutex mu_;
  std::optional<StatusView> last_;  // what text_ was rendered from
  std::shared_ptr<const std::string> text_;
};

}  // namespace leasefs::control

#include "service/status_report.hpp"

#include <ctime>
#include <sstream>

#include "base/duration_text.hpp"
#include "service/md_quote.hpp"

namespace leasefs::service {

std::string render_status_md(const gate::TaskState& s, const std::vector<nlohmann::json>& refusals,
                             int64_t now_ms, bool disk_full, const std::string& heads_note,
                             const FleetLink* fleet) {
  std::ostringstream out;
  // Every string that did not come from the daemon itself goes through md_quote():
  // each line below begins with text the daemon wrote (md_quote.hpp).
  out << "# leasefs status\n\n";
  if (disk_full) {
    out << "**The disk is full.** Writes, creates and anything else that takes space get "
           "ENOSPC, leased or not, until a person frees space. What the journal holds for older "
           "turns, `leasectl journal prune` frees (those turns can then no longer be undone); "
           "`leasectl status` shows how much.\n\n";
  }
  if (fleet && !fleet->reachable) {
    out << "**The fleet's centre is unreachable** (its bridge, uid " << fleet->bridge_uid
        << ", says: " << md_quote(fleet->detail)
        << "). No central decision can arrive; writes stay refused unless a local approver "
           "grants or approves here (`leasectl approve ID`).\n\n";
  }
  if (!s.has_task()) {
    out << "No task. Writes are refused until a task is started (`leasectl start "
           "\"what you will do\"`) and a person grants a lease.\n";
  } else {
    out << "Task: " << md_quote(s.task_id) << " — " << md_quote(s.description) << "\n";
    out << "Status: " << to_string(s.status) << "\n";
    out << "Turn: " << s.turn_index << "\n";
    if (!s.next_step.empty()) out << "Next step: " << md_quote(s.next_step) << "\n";
  }
  out << "\n## Lease for turn " << s.turn_index << "\n";
  bool any = false;
  for (const auto& g : s.grants) {
    if (g.turn != s.turn_index) continue;
    any = true;
    out << "- " << md_quote(g.id) << ": " << md_quote(g.reason);
    if (!g.paths.empty()) {
      out << " paths:";
      for (const auto& p : g.paths) out << " " << md_quote(p);
    }
    if (g.ops != gate::kAllOps) {
      out << " ops:";
      for (const auto& o : gate::op_class_names(g.ops)) out << " " << o;
    }
    if (g.expires_ms) {
      const int64_t left = *g.expires_ms - now_ms;
      out << (left > 0 ? " expires in " + base::duration_text(left) : std::string(" expired"));
    }
    out << "\n";
  }
  if (!any)
    out << "None: the tree is read-only. Every write, create, rename or delete gets EACCES.\n";

  out << "\n## Last refusals\n";
  if (refusals.empty()) out << "None.\n";
  for (const auto& r : refusals) {
    out << "- " << md_quote(r.value("op", "?")) << " " << md_quote(r.value("path", "?")) << " by "
        << md_quote(r.value("process", "?")) << " (pid " << r.value("pid", 0)
        << "): " << md_quote(r.value("reason", "?"));
    if (r.value("count", 1) > 1) out << " ×" << r.value("count", 1);
    // When, in UTC (the reader's zone is not the daemon's), and in which turn.
    if (r.contains("turn")) out << " (turn " << r.value("turn", uint64_t{0});
    if (const int64_t ms = r.value("ts_ms", int64_t{0}); ms > 0 && r.contains("turn")) {
      const time_t secs = static_cast<time_t>(ms / 1000);
      struct tm tm {};
      gmtime_r(&secs, &tm);
      char buf[32];
      std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
      out << ", " << buf;
    }
    if (r.contains("turn")) out << ")";
    out << "\n";
  }

  out << "\n## How to ask for a lease\n"
         "Do not look for another way to write. Ask, and wait for a person to approve:\n\n"
         "    leasectl request --reason \"what you will change and why\" --path 'src/**'\n\n"
         "A lease lasts for the current turn only; ask again in the next one.\n";
  if (!heads_note.empty()) out << "\n## Audit\nSigned heads: " << md_quote(heads_note) << "\n";
  return out.str();
}

}  // namespace leasefs::service

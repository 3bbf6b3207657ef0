#include "service/status_report.hpp"

#include <sstream>

#include "service/md_quote.hpp"

namespace leasefs::service {

std::string render_status_md(const gate::TaskState& s, const std::vector<nlohmann::json>& refusals,
                             int64_t now_ms, bool disk_full) {
  std::ostringstream out;
  // Every string that did not come from the daemon itself goes through md_quote():
  // each line below begins with text the daemon wrote (md_quote.hpp).
  out << "# leasefs status\n\n";
  if (disk_full) {
    out << "**The disk is full.** Writes, creates and anything else that takes space get "
           "ENOSPC, leased or not, until a person frees space.\n\n";
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
      const int64_t left = (*g.expires_ms - now_ms) / 1000;
      out << (left > 0 ? " expires in " + std::to_string(left) + "s" : std::string(" expired"));
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
    out << "\n";
  }

  out << "\n## How to ask for a lease\n"
         "Do not look for another way to write. Ask, and wait for a person to approve:\n\n"
         "    leasectl request --reason \"what you will change and why\" --path 'src/**'\n\n"
         "A lease lasts for the current turn only; ask again in the next one.\n";
  return out.str();
}

}  // namespace leasefs::service

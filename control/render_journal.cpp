#include "control/render_journal.hpp"

#include <string>

namespace leasefs::control {

using nlohmann::json;

namespace {

json pair_json(const journal::DiffChange::Pair& p) {
  return json::array({p.first, p.second});
}

json xattr_json(const journal::DiffChange::Xattr& x) {
  if (!x.shown) return "changed (value not shown)";
  // Values in hex, exactly; null where there is none.
  return json::array({x.before ? json(*x.before) : json(), x.after ? json(*x.after) : json()});
}

json change_json(const journal::DiffChange& c) {
  json j = {{"path", c.path}, {"change", std::string(journal::what_name(c.what))}};
  if (c.what == journal::DiffChange::What::kRenamed) j["to"] = c.to;
  if (c.kind) j["kind"] = *c.kind;
  if (c.what == journal::DiffChange::What::kLeftover) j["blob"] = c.blob;
  if (c.mode) j["mode"] = pair_json(*c.mode);
  if (c.owner) j["owner"] = pair_json(*c.owner);
  if (!c.xattrs.empty()) {
    json changed = json::object();
    for (const auto& [name, x] : c.xattrs) changed[name] = xattr_json(x);
    j["xattrs"] = std::move(changed);
  }
  if (c.target) j["target"] = pair_json(*c.target);
  if (!c.undoable) {
    j["undoable"] = false;
    j["why"] = c.why;
  }
  if (c.content) j["content"] = true;
  if (c.binary) j["binary"] = true;
  return j;
}

}  // namespace

json render(const service::DiffResult& r) {
  json changes = json::array();
  for (const auto& c : r.report.changes) changes.push_back(change_json(c));
  json out = {{"turn", r.report.turn}, {"changes", std::move(changes)}, {"text", r.report.text}};
  if (!r.journal_on) out["journal"] = "off";
  return out;
}

json render(const service::UndoResult& r) {
  const journal::UndoReport& u = r.report;
  json not_undoable = json::array(), conflicts = json::array();
  for (const auto& n : u.not_undoable) not_undoable.push_back({{"path", n.path}, {"why", n.why}});
  for (const auto& c : u.conflicts) conflicts.push_back({{"path", c.path}, {"turn", c.turn}});
  json out = {{"turn", u.turn},
              {"dry_run", u.dry_run},
              {"conflicts", std::move(conflicts)},
              {"restored", u.restored},
              {"removed", u.removed},
              {"not_undoable", std::move(not_undoable)},
              {"applied", u.applied},
              {"journaled_in_turn", r.journaled_in_turn},
              {"can_be_undone", r.can_be_undone}};
  if (!r.warning.empty()) out["warning"] = r.warning;
  return out;
}

json render(const service::PruneResult& r) {
  json turns = json::array();
  uint64_t bytes = 0;
  for (const auto& p : r.pruned) {
    // The paths each turn could have put back: every one of them is now for good.
    turns.push_back({{"turn", p.turn}, {"bytes", p.bytes}, {"not_undoable_now", p.paths}});
    bytes += p.bytes;
  }
  return {{"turn", r.turn}, {"dry_run", r.dry_run}, {"pruned", std::move(turns)}, {"bytes", bytes}};
}

}  // namespace leasefs::control

#include "fleet/person_desk.hpp"

#include <nlohmann/json.hpp>

namespace leasefs::fleet {

namespace {

std::vector<std::string> string_array(const std::string& text) {
  std::vector<std::string> out;
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (!parsed.is_array()) return out;
  for (const auto& v : parsed) out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

// Why the ledger already holds a decision for `request_id`, or "".
std::string already_decided(PgConnection& db, const std::string& request_id) {
  PgResult d = db.exec("SELECT decision, decided_by, id FROM fleet.decisions WHERE request_id = $1",
                       {request_id});
  if (d.rows() == 0) return "";
  return "request " + request_id + " is decided already: " + d.text(0, 0) + " by " + d.text(0, 1) +
         " (decision " + d.text(0, 2) + "); the first decision stands";
}

}  // namespace

std::vector<PendingRequest> pending_requests(PgConnection& db) {
  PgResult r = db.exec(
      "SELECT r.id, r.machine, r.project_id, p.root, r.task_id, r.turn, r.paths, r.ops, r.reason,"
      " coalesce(r.requester_uid::text, ''), coalesce(r.requester_pid::text, ''),"
      " coalesce(r.requester_command, ''), r.digest"
      " FROM fleet.requests r JOIN fleet.projects p ON p.id = r.project_id"
      " WHERE NOT EXISTS (SELECT 1 FROM fleet.decisions d WHERE d.request_id = r.id)"
      " ORDER BY r.id");
  std::vector<PendingRequest> out;
  for (int i = 0; i < r.rows(); ++i) {
    PendingRequest p;
    p.id = r.text(i, 0);
    p.machine = r.text(i, 1);
    p.project_id = r.text(i, 2);
    p.root = r.text(i, 3);
    p.task_id = r.text(i, 4);
    p.turn = r.text(i, 5);
    p.paths = string_array(r.text(i, 6));
    p.ops = string_array(r.text(i, 7));
    p.reason = r.text(i, 8);
    p.requester_uid = r.text(i, 9);
    p.requester_pid = r.text(i, 10);
    p.requester_command = r.text(i, 11);
    p.digest = r.text(i, 12);
    out.push_back(std::move(p));
  }
  return out;
}

Decided decide(PgConnection& db, const std::string& request_id, const std::string& decision,
               const std::string& reason) {
  if (decision != "approve" && decision != "reject") {
    throw DecisionRefused("a decision is approve or reject, not " + decision);
  }
  PgResult req = db.exec("SELECT digest FROM fleet.requests WHERE id::text = $1", {request_id});
  if (req.rows() == 0) {
    throw DecisionRefused("request " + request_id + " is not one you may decide as " + db.user() +
                          ": the ledger shows you no such request (none has that id, or its "
                          "project is not delegated to you)");
  }
  if (std::string why = already_decided(db, request_id); !why.empty()) throw DecisionRefused(why);
  try {
    PgResult row = db.exec(
        "INSERT INTO fleet.decisions (request_id, decision, digest, reason)"
        " VALUES ($1, $2, $3, $4) RETURNING id",
        {request_id, decision, req.text(0, 0), reason});
    return {row.text(0, 0), request_id};
  } catch (const PgError& e) {
    if (e.sqlstate() == "23505") {  // unique_violation: another decision came first
      std::string why = already_decided(db, request_id);
      throw DecisionRefused(why.empty() ? "request " + request_id + " is decided already" : why);
    }
    if (e.sqlstate() == "42501") {  // the row-level policy
      throw DecisionRefused("the ledger refuses a decision by " + db.user() + " on request " +
                            request_id + ": it is not delegated to you");
    }
    throw;
  }
}

bool paths_under(const PendingRequest& r, const std::string& prefix) {
  std::string p = prefix;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  if (p.empty()) return true;
  if (r.paths.empty()) return false;
  for (const std::string& path : r.paths) {
    if (path == p) continue;
    if (p == "/" ? path.starts_with("/") : path.starts_with(p + "/")) continue;
    return false;
  }
  return true;
}

std::vector<Decided> decide_matching(PgConnection& db, const std::string& project,
                                     const std::string& path_prefix, const std::string& decision,
                                     const std::string& reason) {
  std::vector<Decided> out;
  for (const PendingRequest& r : pending_requests(db)) {
    if (r.root != project && r.project_id != project) continue;
    if (!paths_under(r, path_prefix)) continue;
    try {
      out.push_back(decide(db, r.id, decision, reason));
    } catch (const DecisionRefused&) {
      // Decided by someone else since the list was read: theirs stands.
      if (already_decided(db, r.id).empty()) throw;
    }
  }
  return out;
}

}  // namespace leasefs::fleet

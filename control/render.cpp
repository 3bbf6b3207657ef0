#include "control/render.hpp"

#include "gate/op.hpp"
#include "service/checkpoint_text.hpp"
#include "service/service_support.hpp"

namespace leasefs::control {

using nlohmann::json;
// A request reads the same in a reply as in the `request` event.
using service::request_json;

namespace {

const char* access_mode(bool leased) {
  return leased ? "leased" : "read_only";
}

}  // namespace

// The wire's grant, kept apart from state.json's (gate/task_state.cpp): the two
// happen to agree today, but a change of the state file must not change replies.
json grant_json(const gate::Grant& g) {
  json j = {{"id", g.id},
            {"turn", g.turn},
            {"reason", g.reason},
            {"approver_uid", g.approver_uid},
            {"paths", g.paths},
            {"ops", gate::op_class_names(g.ops)},
            {"issued_ms", g.issued_ms},
            {"expires_ms", g.expires_ms ? json(*g.expires_ms) : json(nullptr)}};
  if (!g.request_id.empty()) j["request_id"] = g.request_id;
  return j;
}

json task_json(const gate::TaskState& s) {
  if (!s.has_task()) return nullptr;
  return {{"task_id", s.task_id},
          {"description", s.description},
          {"done_when", s.done_when},
          {"keywords", s.keywords},
          {"status", to_string(s.status)},
          {"turn", s.turn_index},
          {"current_step", s.current_step},
          {"next_step", s.next_step},
          {"last_checkpoint_id", s.last_checkpoint_id}};
}

json hits_json(const std::vector<memory::SearchHit>& hits) {
  json out = json::array();
  for (const auto& h : hits) {
    out.push_back({{"id", h.record.id},
                   {"type", h.record.type},
                   {"title", h.record.title},
                   {"task_id", h.record.task_id},
                   {"score", h.score},
                   {"content", h.record.content}});
  }
  return out;
}

json ask_json(const service::AskStatus& a) {
  return {{"timeout_ms", a.timeout_ms},
          {"on", a.on},
          {"set_by", a.set_by_task ? "task" : "mount"},
          {"waiting", a.waiting}};
}

json render(const service::FleetLink& f) {
  return {{"centre", f.reachable ? "reachable" : "unreachable"},
          {"detail", f.detail},
          {"bridge_uid", f.bridge_uid},
          {"reported_ms", f.reported_ms}};
}

json render(const service::StatusReport& r) {
  json grants = json::array();
  for (const auto& g : r.grants) grants.push_back(grant_json(g));
  json pending = json::array();
  for (const auto& p : r.pending_requests) {
    json j = request_json(p.request);
    if (p.ask) j["ask"] = true;  // an operation is parked on it
    pending.push_back(std::move(j));
  }
  json out = {{"task", task_json(r.task)},
              {"turn", r.turn},
              {"access_mode", access_mode(!r.grants.empty())},
              {"grants", std::move(grants)},
              {"pending_requests", std::move(pending)},
              {"pending_checkpoint", r.pending_checkpoint},
              {"memory_records", r.memory_records},
              {"recent_refusals", r.recent_refusals},
              {"refusals_total", r.refusals_total}};
  if (r.file_plane) out["file_plane"] = *r.file_plane;
  if (r.signed_heads) out["signed_heads"] = *r.signed_heads;
  if (r.disk) {
    out["disk"] = {{"full", r.disk->full},
                   {"reserve_bytes", r.disk->reserve_bytes},
                   {"free_bytes", r.disk->free_bytes},
                   {"reserve_given_up", r.disk->given_up}};
  }
  out["protected_paths"] = r.protected_paths;
  out["ask"] = ask_json(r.ask);
  json foreign = json::array();
  for (const auto& m : r.foreign_mounts) {
    foreign.push_back({{"mount_point", m.mount_point},
                       {"fstype", m.fstype},
                       {"source", m.source},
                       {"uid", m.uid},
                       {"mount_id", m.mount_id},
                       {"seen_ms", m.seen_ms}});
  }
  out["foreign_mounts"] = std::move(foreign);
  if (r.fleet) out["fleet"] = render(*r.fleet);
  out["policy"] = r.policy;
  if (!r.state_error.empty()) {
    out["state_error"] = r.state_error;
    out["repair"] = r.repair;
  }
  return out;
}

json render(const StatusView& v) {
  json out = render(v.report);
  if (!v.budget_refusals.is_null()) out["budget_refusals"] = v.budget_refusals;
  if (v.journal) out["journal"] = render(*v.journal);
  return out;
}

json render(const service::StartResult& r) {
  return {{"task", task_json(r.task)},
          {"access_mode", "read_only"},
          {"memories", hits_json(r.memories)}};
}

json render(const service::TurnResult& r) {
  return {{"turn", r.turn}, {"revoked", r.revoked}, {"access_mode", "read_only"}};
}

json render(const service::GrantResult& r) {
  return {{"grant", grant_json(r.grant)}, {"turn", r.turn}};
}

json render(const service::RevokeResult& r) {
  return {{"revoked", r.revoked}, {"access_mode", access_mode(r.leased)}};
}

json render(const service::RequestResult& r) {
  const std::string& id = r.request.id;
  if (r.auto_grant) {
    return {{"request", request_json(r.request)},
            {"grant", grant_json(*r.auto_grant)},
            {"source", r.auto_source},
            {"hint", "approved by the fleet's " + r.auto_source +
                         ", for this turn only, as grant " + r.auto_grant->id}};
  }
  return {{"request", request_json(r.request)},
          {"hint", "waiting for a person: `leasectl approve " + id + "` or `leasectl reject " + id +
                       "`; the approval is good for this turn only"}};
}

json render(const service::ApproveResult& r) {
  return {{"request", request_json(r.request)}, {"grant", grant_json(r.grant)}};
}

json render(const service::RejectResult& r) {
  return {{"request", request_json(r.request)}};
}

json render(const service::CheckpointResult& r) {
  return {{"checkpoint_id", r.checkpoint_id},
          {"record_id", r.record_id},
          {"status", to_string(r.status)},
          {"access_mode", "read_only"},
          {"text", r.text}};
}

json render(const service::ResumeResult& r) {
  json checkpoint = nullptr;
  if (r.checkpoint) {
    const auto parts = service::checkpoint_parts(r.checkpoint->text);
    checkpoint = {{"id", r.checkpoint->id},     {"record_id", r.checkpoint->record_id},
                  {"text", r.checkpoint->text}, {"notes", parts.notes},
                  {"closing", parts.closing},   {"marker", parts.marker}};
  }
  return {{"task", task_json(r.task)},
          {"turn", r.turn},
          {"access_mode", "read_only"},
          {"checkpoint", std::move(checkpoint)},
          {"memories", hits_json(r.memories)}};
}

json render(const service::TransitionResult& r) {
  return {{"task", task_json(r.task)}, {"from", to_string(r.from)}, {"to", to_string(r.to)}};
}

json render(const service::MemorySearchResult& r) {
  return {{"query", r.query}, {"hits", hits_json(r.hits)}};
}

json render(const service::MemorySaveResult& r) {
  return {{"id", r.id}, {"title", r.title}};
}

json render(const service::SetAskResult& r) {
  return {{"ask", ask_json(r.ask)}};
}

json render(const service::JournalStatus& s) {
  return {{"enabled", s.enabled},
          {"turn", s.turn},
          {"bytes", s.bytes},
          {"turns_kept", s.turns_kept},
          {"older_turns_bytes", s.older_bytes},
          {"not_undoable", s.not_undoable}};
}

json render(const memory::VerifyResult& r) {
  json out = {{"ok", r.ok}, {"records", r.records}};
  if (!r.ok) {
    out["first_bad_line"] = r.first_bad_line;
    out["kind"] = r.kind;
    out["message"] = r.message;
  }
  return out;
}

}  // namespace leasefs::control

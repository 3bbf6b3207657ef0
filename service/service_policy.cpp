// Central policy's use cases (gate/central_policy.hpp). The fleet's bridge sends
// the machine's rows as one policy; it is checked in full (one bad rule refuses
// all of it, and the policy in force stays), kept in .longrun/policy.json before
// it takes effect (a restart comes back with it, not without it), merged with the
// daemon's own settings, published, and audited with its version and rule ids.
// A rule's expiry is the daemon's own to notice: a thread publishes again at each.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "base/clock.hpp"
#include "base/error.hpp"
#include "gate/protected_paths.hpp"
#include "service/service.hpp"
#include "service/service_support.hpp"

namespace leasefs::service {

using nlohmann::json;

namespace {

constexpr const char* kPolicyFile = "policy.json";

json rule_ids(const gate::CentralPolicy& policy, int64_t now_ms, bool in_force) {
  json ids = json::array();
  for (const gate::PolicyRule& r : policy.rules) {
    if (r.in_force(now_ms) == in_force) ids.push_back(r.id);
  }
  return ids;
}

}  // namespace

void Service::load_policy() {
  local_protected_ = gate_.protected_globs();
  std::ifstream in(store_.dir().path(kPolicyFile));
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    try {
      const json kept = json::parse(text.str());
      policy_ = gate::parse_policy(kept.at("policy"), local_protected_);
      policy_wire_ = kept.at("policy");
      policy_applied_ms_ = kept.value("applied_ms", int64_t{0});
      policy_by_uid_ = kept.value("by_uid", uint32_t{0});
    } catch (const std::exception& e) {
      // The daemon's own settings stand; the bridge sends the policy again.
      policy_error_ = std::string(".longrun/policy.json not applied: ") + e.what();
      spdlog::error("{}", policy_error_);
    }
  }
  policy_checked_ms_ = base::now_ms();
  refresh_policy(policy_checked_ms_);
}

void Service::refresh_policy(int64_t now_ms) {
  effective_ = gate::merge_policy(local_protected_, policy_, now_ms);
  gate_.set_protected_globs(effective_.protected_globs);
  policy_expiry_.at(effective_.next_expiry_ms);
}

int64_t Service::ask_ms_in_force() const {
  return gate::effective_ask_ms(state_.ask_ms.value_or(ask_default_ms_), effective_);
}

json Service::apply_policy(const json& policy, const gate::Actor& actor) {
  auto lock = lock_service();
  require_approver(actor, "apply a central policy");
  require_readable_state();
  const json version = policy.is_object() ? policy.value("version", json()) : json();
  gate::CentralPolicy next;
  try {
    next = gate::parse_policy(policy, local_protected_);
  } catch (const gate::PolicyRefused& e) {
    spdlog::warn("policy from uid {} refused: {}", actor.uid, e.what());
    emit({{"type", "policy_refused"},
          {"version", version.is_string() ? version : json(nullptr)},
          {"rule", e.rule()},
          {"why", e.what()},
          {"uid", actor.uid}});
    throw Error(Errc::kInvalidArgument,
                std::string("policy refused, nothing of it applied: ") + e.what());
  }
  const int64_t now = base::now_ms();
  if (next == policy_ && policy_error_.empty()) return policy_json(now);  // a bridge repeats itself
  // On disk before it takes effect: what the gate enforces, a restart enforces.
  const json kept = {{"policy", policy}, {"applied_ms", now}, {"by_uid", actor.uid}};
  store_.write_file(kPolicyFile, kept.dump());
  policy_ = std::move(next);
  policy_wire_ = policy;
  policy_applied_ms_ = now;
  policy_by_uid_ = actor.uid;
  policy_error_.clear();
  policy_checked_ms_ = now;
  refresh_policy(now);
  // A cap holds for the grants already in force too.
  gate::TaskState capped = state_;
  bool shortened = false;
  if (effective_.ttl_cap_ms) {
    for (gate::Grant& g : capped.grants) {
      const int64_t limit = g.issued_ms + *effective_.ttl_cap_ms;
      if (g.turn == capped.turn_index && (!g.expires_ms || *g.expires_ms > limit)) {
        g.expires_ms = limit;
        shortened = true;
      }
    }
  }
  if (shortened) {
    commit(std::move(capped), Durability::kAfterReply);
  } else {
    publish_snapshot(state_);
    write_status();
  }
  if (ask_ms_in_force() == 0) end_asks("ask mode ended with the central policy's rule");
  spdlog::info("policy {} applied by uid {}: {} rule(s)", policy_.version, actor.uid,
               policy_.rules.size());
  emit({{"type", "policy_applied"},
        {"version", policy_.version},
        {"rules", rule_ids(policy_, now, true)},
        {"expired", rule_ids(policy_, now, false)},
        {"uid", actor.uid}});
  return policy_json(now);
}

void Service::policy_expired() {
  auto lock = lock_service();
  const int64_t now = base::now_ms();
  json ids = json::array();
  for (const gate::PolicyRule& r : policy_.rules) {
    if (r.expires_ms && *r.expires_ms <= now && *r.expires_ms > policy_checked_ms_) {
      ids.push_back(r.id);
    }
  }
  policy_checked_ms_ = now;
  refresh_policy(now);
  publish_snapshot(state_);
  if (ask_ms_in_force() == 0) end_asks("ask mode ended with the central policy's rule");
  write_status();
  if (!ids.empty()) {
    spdlog::info("policy {}: {} rule(s) expired", policy_.version, ids.size());
    emit({{"type", "policy_expired"}, {"version", policy_.version}, {"rules", ids}});
  }
}

json Service::policy_json(int64_t now_ms) const {
  json rules = json::array();
  for (const gate::PolicyRule& r : policy_.rules) {
    if (r.in_force(now_ms)) rules.push_back(gate::to_json(r));
  }
  json protect = json::array();
  for (const std::string& g : effective_.protected_globs) {
    std::string source = "local";
    if (std::find(local_protected_.begin(), local_protected_.end(), g) == local_protected_.end()) {
      for (const gate::PolicyRule& r : policy_.rules) {
        if (r.kind == gate::RuleKind::kProtect && r.in_force(now_ms) &&
            std::find(r.globs.begin(), r.globs.end(), g) != r.globs.end()) {
          source = r.source();
          break;
        }
      }
    }
    protect.push_back({{"glob", g}, {"source", source}});
  }
  const int64_t local_ask = state_.ask_ms.value_or(ask_default_ms_);
  json auto_rules = json::array();
  for (const gate::PolicyRule& r : effective_.auto_approve) auto_rules.push_back(r.source());
  json out = {
      {"version", policy_.version},
      {"applied_ms", policy_applied_ms_},
      {"applied_by_uid", policy_by_uid_},
      {"rules", std::move(rules)},
      {"expired", rule_ids(policy_, now_ms, false)},
      {"in_force",
       {{"protected", std::move(protect)},
        {"ask_ms", ask_ms_in_force()},
        {"ask_source", local_ask > 0           ? json("local")
                       : effective_.ask_ms > 0 ? json("policy:" + effective_.ask_rule)
                                               : json(nullptr)},
        {"ttl_cap_ms", effective_.ttl_cap_ms ? json(*effective_.ttl_cap_ms) : json(nullptr)},
        {"ttl_cap_source",
         effective_.ttl_cap_ms ? json("policy:" + effective_.ttl_cap_rule) : json(nullptr)},
        {"auto_approve", std::move(auto_rules)}}}};
  if (!policy_error_.empty()) out["error"] = policy_error_;
  return out;
}

void Service::auto_approve(RequestResult& result, gate::OpMask asked) {
  const memory::Request& request = result.request;
  const gate::PolicyRule* rule = gate::auto_approver(effective_, request.paths);
  if (!rule || !foreign_mounts_.empty()) return;
  if ((rule->ops & asked) != asked) return;
  const std::string source = rule->source();
  const gate::OpMask ops = rule->ops;
  const auto daemon = static_cast<uint32_t>(::geteuid());
  memory::DecisionOutcome outcome;
  try {
    outcome = change_requests([&](memory::Ledger& l) {
      return l.decide(request.id, memory::Decision::approve, state_.task_id,
                      static_cast<int64_t>(state_.turn_index), daemon,
                      "approved by central " + source);
    });
  } catch (const std::exception& e) {
    spdlog::warn("request {}: auto-approval by {} not recorded: {}", request.id, source, e.what());
    return;  // it stays pending, for a person
  }
  gate::TaskState next = state_;
  gate::Grant g;
  g.id = padded("G_", ++next.grant_seq);
  g.turn = next.turn_index;
  g.reason = "approved " + request.id + " by central " + source + ": " + request.reason;
  g.approver_uid = daemon;
  g.paths = request.paths;
  g.ops = ops;
  g.issued_ms = base::now_ms();
  g.request_id = request.id;
  const auto ttl = gate::capped_ttl_ms(std::nullopt, effective_);
  if (ttl) g.expires_ms = g.issued_ms + *ttl;
  try {
    issue_grant(std::move(next), g, ttl.value_or(0));
  } catch (const std::exception& e) {
    // Decided in the ledger, never in force: the asker asks again.
    spdlog::error("request {}: the grant of {} not issued: {}", request.id, source, e.what());
    return;
  }
  spdlog::info("request {} approved by {} as grant {}", request.id, source, g.id);
  emit({{"type", "decision"},
        {"decision", "approve"},
        {"request_id", request.id},
        {"grant_id", g.id},
        {"uid", daemon},
        {"source", source},
        {"reason", g.reason}});
  result.request = std::move(outcome.request);
  result.auto_grant = std::move(g);
  result.auto_source = source;
}

}  // namespace leasefs::service

#include "gate/central_policy.hpp"

#include <algorithm>
#include <set>

#include "gate/ask.hpp"
#include "gate/decision.hpp"
#include "gate/glob.hpp"
#include "gate/protected_paths.hpp"

namespace leasefs::gate {

using nlohmann::json;

namespace {

constexpr size_t kMaxVersionBytes = 128;
constexpr size_t kMaxRuleIdBytes = 64;
constexpr size_t kMaxRuleTextBytes = 256;
constexpr std::string_view kLongrunGlob = ".longrun/**";

bool is_rule_id_char(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c == '-' || c == '.';
}

// The rule's id as text: the ledger's bigserial comes as a number or a string.
std::string rule_id(const json& rule) {
  const json id = rule.value("id", json());
  std::string text;
  if (id.is_number_integer() && id.get<int64_t>() >= 0) {
    text = std::to_string(id.get<int64_t>());
  } else if (id.is_string()) {
    text = id.get<std::string>();
  } else {
    throw PolicyRefused("", "a rule without an \"id\" (a string or a non-negative integer)");
  }
  if (text.empty() || text.size() > kMaxRuleIdBytes ||
      !std::all_of(text.begin(), text.end(), is_rule_id_char)) {
    throw PolicyRefused("", "a rule id must be 1 to 64 of [A-Za-z0-9_.-]");
  }
  return text;
}

std::string text_field(const json& rule, const std::string& id, const char* key) {
  const json v = rule.value(key, json(""));
  if (!v.is_string() || v.get_ref<const std::string&>().size() > kMaxRuleTextBytes) {
    throw PolicyRefused(id, std::string("\"") + key + "\" must be a string of at most 256 bytes");
  }
  return v.get<std::string>();
}

int64_t integer_field(const json& rule, const std::string& id, const char* key, int64_t lo,
                      int64_t hi, const std::string& why) {
  const json v = rule.value(key, json());
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
    throw PolicyRefused(id, std::string("\"") + key + "\" must be an integer from " +
                                std::to_string(lo) + " to " + std::to_string(hi) + why);
  }
  return v.get<int64_t>();
}

std::vector<std::string> glob_field(const json& rule, const std::string& id) {
  const json v = rule.value("globs", json());
  if (!v.is_array() || v.empty() || v.size() > kMaxPolicyGlobs) {
    throw PolicyRefused(id, "\"globs\" must be a list of 1 to 64 globs");
  }
  std::vector<std::string> out;
  for (const json& g : v) {
    if (!g.is_string()) throw PolicyRefused(id, "every glob must be a string");
    std::string why;
    std::string normalized = normalize_protected_glob(g.get<std::string>(), &why);
    if (normalized.empty()) throw PolicyRefused(id, "glob " + g.dump() + ": " + why);
    if (std::find(out.begin(), out.end(), normalized) == out.end()) out.push_back(normalized);
  }
  return out;
}

void only_fields(const json& rule, const std::string& id, std::initializer_list<const char*> own) {
  static const std::set<std::string> kCommon = {"id", "kind", "owner", "scope", "expires_ms"};
  for (const auto& [key, value] : rule.items()) {
    if (kCommon.count(key) > 0) continue;
    if (std::none_of(own.begin(), own.end(), [&](const char* k) { return key == k; })) {
      throw PolicyRefused(id, "unknown field " + json(key).dump() + " for a " +
                                  rule.value("kind", std::string()) + " rule");
    }
  }
}

PolicyRule parse_rule(const json& rule) {
  if (!rule.is_object()) throw PolicyRefused("", "every rule must be a JSON object");
  PolicyRule r;
  r.id = rule_id(rule);
  const json kind = rule.value("kind", json());
  const std::string k = kind.is_string() ? kind.get<std::string>() : "";
  if (k == "protect") {
    r.kind = RuleKind::kProtect;
    only_fields(rule, r.id, {"globs"});
    r.globs = glob_field(rule, r.id);
  } else if (k == "ask") {
    r.kind = RuleKind::kAsk;
    only_fields(rule, r.id, {"timeout_s"});
    r.ask_ms = integer_field(rule, r.id, "timeout_s", 1, kMaxAskMs / 1000,
                             " seconds: a policy turns ask mode on, never off") *
               1000;
  } else if (k == "ttl_cap") {
    r.kind = RuleKind::kTtlCap;
    only_fields(rule, r.id, {"seconds"});
    r.ttl_cap_ms = integer_field(rule, r.id, "seconds", 1, kMaxTtlCapS, "") * 1000;
  } else if (k == "auto_approve") {
    r.kind = RuleKind::kAutoApprove;
    only_fields(rule, r.id, {"globs", "ops"});
    r.globs = glob_field(rule, r.id);
    const json ops = rule.value("ops", json());
    std::vector<std::string> names;
    if (ops.is_array()) {
      for (const json& o : ops) {
        if (o.is_string()) names.push_back(o.get<std::string>());
      }
    }
    if (!ops.is_array() || names.empty() || names.size() != ops.size()) {
      throw PolicyRefused(r.id, "\"ops\" must be a non-empty list of op classes");
    }
    if (auto problem = op_classes_problem(names)) throw PolicyRefused(r.id, *problem);
    r.ops = parse_op_classes(names).value_or(0);
  } else {
    throw PolicyRefused(
        r.id, "unknown rule kind " + kind.dump() + " (known: protect, ask, ttl_cap, auto_approve)");
  }
  r.owner = text_field(rule, r.id, "owner");
  r.scope = text_field(rule, r.id, "scope");
  if (rule.contains("expires_ms")) {
    const json e = rule["expires_ms"];
    if (!e.is_number_integer()) {
      throw PolicyRefused(r.id, "\"expires_ms\" must be an integer (ms since the epoch)");
    }
    r.expires_ms = e.get<int64_t>();
  }
  return r;
}

bool policy_segment_wild(std::string_view seg) noexcept {
  return seg.empty() || seg.find_first_of("*?") != std::string_view::npos;
}

std::string_view policy_trim(std::string_view p) noexcept {
  while (p.starts_with('/') || p.starts_with("./")) p.remove_prefix(p.starts_with('/') ? 1 : 2);
  return p;
}

// Whether a path pattern would reach what one of `protect` (or .longrun/) holds.
bool reaches_protected(std::string_view pattern, const std::vector<std::string>& protect) {
  if (may_overlap(pattern, kLongrunGlob)) return true;
  return std::any_of(protect.begin(), protect.end(),
                     [&](const std::string& p) { return may_overlap(pattern, p); });
}

}  // namespace

std::string_view to_string(RuleKind kind) noexcept {
  switch (kind) {
    case RuleKind::kProtect:
      return "protect";
    case RuleKind::kAsk:
      return "ask";
    case RuleKind::kTtlCap:
      return "ttl_cap";
    case RuleKind::kAutoApprove:
      return "auto_approve";
  }
  return "?";
}

bool may_overlap(std::string_view pattern, std::string_view protect) noexcept {
  pattern = policy_trim(pattern);
  protect = policy_trim(protect);
  while (true) {
    const size_t a = pattern.find('/'), b = protect.find('/');
    const std::string_view sa = pattern.substr(0, a), sb = protect.substr(0, b);
    if (policy_segment_wild(sa) || policy_segment_wild(sb)) return true;
    if (sa != sb) return false;
    // One is a directory above the other: what it covers holds the other's paths.
    if (a == std::string_view::npos || b == std::string_view::npos) return true;
    pattern.remove_prefix(a + 1);
    protect.remove_prefix(b + 1);
  }
}

CentralPolicy parse_policy(const json& policy, const std::vector<std::string>& local_protected) {
  if (!policy.is_object()) throw PolicyRefused("", "a policy is a JSON object");
  for (const auto& [key, value] : policy.items()) {
    if (key != "version" && key != "rules") {
      throw PolicyRefused("", "unknown field " + json(key).dump() + " (known: version, rules)");
    }
  }
  const json version = policy.value("version", json());
  if (!version.is_string() || version.get_ref<const std::string&>().empty() ||
      version.get_ref<const std::string&>().size() > kMaxVersionBytes) {
    throw PolicyRefused("", "\"version\" must be a string of 1 to 128 bytes");
  }
  const json rules = policy.value("rules", json::array());
  if (!rules.is_array() || rules.size() > kMaxPolicyRules) {
    throw PolicyRefused("", "\"rules\" must be a list of at most 64 rules");
  }
  CentralPolicy out;
  out.version = version.get<std::string>();
  std::set<std::string> ids;
  for (const json& rule : rules) {
    PolicyRule r = parse_rule(rule);
    if (!ids.insert(r.id).second) throw PolicyRefused(r.id, "the rule id is given twice");
    out.rules.push_back(std::move(r));
  }
  // What auto-approval may never cover: the daemon's protected paths and every
  // protect rule's, in force or not (one that expires first must not open them).
  std::vector<std::string> protect = local_protected;
  for (const PolicyRule& r : out.rules) {
    if (r.kind == RuleKind::kProtect) protect.insert(protect.end(), r.globs.begin(), r.globs.end());
  }
  for (const PolicyRule& r : out.rules) {
    if (r.kind != RuleKind::kAutoApprove) continue;
    for (const std::string& g : r.globs) {
      if (reaches_protected(g, protect)) {
        throw PolicyRefused(r.id, "auto_approve glob " + json(g).dump() +
                                      " could cover .longrun/ or a protected path; name a "
                                      "directory no protected glob reaches");
      }
    }
  }
  return out;
}

json to_json(const PolicyRule& rule) {
  json out = {{"id", rule.id},
              {"kind", to_string(rule.kind)},
              {"source", rule.source()},
              {"owner", rule.owner},
              {"scope", rule.scope},
              {"expires_ms", rule.expires_ms ? json(*rule.expires_ms) : json(nullptr)}};
  switch (rule.kind) {
    case RuleKind::kProtect:
      out["globs"] = rule.globs;
      break;
    case RuleKind::kAsk:
      out["timeout_s"] = rule.ask_ms / 1000;
      break;
    case RuleKind::kTtlCap:
      out["seconds"] = rule.ttl_cap_ms / 1000;
      break;
    case RuleKind::kAutoApprove:
      out["globs"] = rule.globs;
      out["ops"] = op_class_names(rule.ops);
      break;
  }
  return out;
}

EffectivePolicy merge_policy(const std::vector<std::string>& local_protected,
                             const CentralPolicy& policy, int64_t now_ms) {
  EffectivePolicy out;
  out.protected_globs = local_protected;
  for (const PolicyRule& r : policy.rules) {
    if (!r.in_force(now_ms)) continue;
    if (r.expires_ms) {
      out.next_expiry_ms = std::min(out.next_expiry_ms.value_or(*r.expires_ms), *r.expires_ms);
    }
    switch (r.kind) {
      case RuleKind::kProtect:
        for (const std::string& g : r.globs) {
          if (std::find(out.protected_globs.begin(), out.protected_globs.end(), g) ==
              out.protected_globs.end()) {
            out.protected_globs.push_back(g);
          }
        }
        break;
      case RuleKind::kAsk:
        if (r.ask_ms > out.ask_ms) {
          out.ask_ms = r.ask_ms;
          out.ask_rule = r.id;
        }
        break;
      case RuleKind::kTtlCap:
        if (!out.ttl_cap_ms || r.ttl_cap_ms < *out.ttl_cap_ms) {
          out.ttl_cap_ms = r.ttl_cap_ms;
          out.ttl_cap_rule = r.id;
        }
        break;
      case RuleKind::kAutoApprove:
        out.auto_approve.push_back(r);
        break;
    }
  }
  return out;
}

int64_t effective_ask_ms(int64_t local_ms, const EffectivePolicy& policy) noexcept {
  return local_ms > 0 ? local_ms : policy.ask_ms;
}

std::optional<int64_t> capped_ttl_ms(std::optional<int64_t> requested,
                                     const EffectivePolicy& policy) noexcept {
  if (!policy.ttl_cap_ms) return requested;
  if (!requested) return policy.ttl_cap_ms;
  return std::min(*requested, *policy.ttl_cap_ms);
}

const PolicyRule* auto_approver(const EffectivePolicy& policy,
                                const std::vector<std::string>& request_paths) noexcept {
  if (request_paths.empty() || policy.auto_approve.empty()) return nullptr;
  for (const std::string& p : request_paths) {
    if (!is_expressible(p) || is_protected_path(p)) return nullptr;
    const bool wild = has_wildcard(p) || p.ends_with('/');
    if (wild) {
      if (reaches_protected(p, policy.protected_globs)) return nullptr;
    } else {
      if (may_overlap(p, kLongrunGlob)) return nullptr;
      for (const std::string& g : policy.protected_globs) {
        // The path itself, or a directory above what the glob protects.
        if (glob_match(g, p) || policy_trim(g).starts_with(p + "/")) {
          return nullptr;
        }
      }
    }
  }
  for (const PolicyRule& rule : policy.auto_approve) {
    const bool covers_all =
        std::all_of(request_paths.begin(), request_paths.end(), [&](const std::string& p) {
          const bool wild = has_wildcard(p) || p.ends_with('/');
          return std::any_of(rule.globs.begin(), rule.globs.end(), [&](const std::string& g) {
            return wild ? g == p : glob_match(g, p);
          });
        });
    if (covers_all) return &rule;
  }
  return nullptr;
}

}  // namespace leasefs::gate

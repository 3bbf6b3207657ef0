// Central policy (the fleet's `fleet.policy` rows, sent by the bridge as
// `policy.apply`): rules that can only tighten what the daemon does on its own.
//
// Four kinds, each one strict JSON shape (an unknown kind or field, a wrong type
// or a value out of range refuses the whole policy; nothing of it is applied):
//
//   {"id":"7","kind":"protect","globs":[".env","secrets/**"]}
//       the globs join the protected set (protected_paths.hpp)
//   {"id":"8","kind":"ask","timeout_s":120}
//       ask mode on, a refused write waiting up to 120 s for a person
//   {"id":"9","kind":"ttl_cap","seconds":600}
//       no grant issued while the rule is in force outlives 600 s
//   {"id":"10","kind":"auto_approve","globs":["docs/**"],"ops":["write","create"]}
//       a request whose every path is covered is approved by the daemon itself,
//       as a grant narrowed to those ops
//
// Every rule may also carry "owner", "scope" (shown) and "expires_ms" (wall
// clock; from then on it is not in force). A rule cannot say "less": there is no
// kind that unprotects, an ask rule cannot be 0 (off), a TTL cap only ever
// shortens a grant, and an auto_approve glob that could reach `.longrun/` or a
// protected path (the daemon's own or a protect rule's) is refused.
//
// The merge (merge_policy) keeps the daemon's own settings and adds the rules':
// protected globs only grow, ask mode is the daemon's when it is on and the
// policy's otherwise, the TTL cap is the lowest of the rules'. No I/O here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gate/op.hpp"

namespace leasefs::gate {

inline constexpr size_t kMaxPolicyRules = 64;
inline constexpr size_t kMaxPolicyGlobs = 64;  // per rule
inline constexpr int64_t kMaxTtlCapS = int64_t{30} * 24 * 3600;

enum class RuleKind : uint8_t { kProtect, kAsk, kTtlCap, kAutoApprove };
std::string_view to_string(RuleKind kind) noexcept;

struct PolicyRule {
  std::string id;  // the ledger row's id
  RuleKind kind = RuleKind::kProtect;
  std::vector<std::string> globs;  // protect, auto_approve
  OpMask ops = 0;                  // auto_approve
  int64_t ask_ms = 0;              // ask
  int64_t ttl_cap_ms = 0;          // ttl_cap
  std::string owner;
  std::string scope;
  std::optional<int64_t> expires_ms;

  // "policy:<id>", what status and the audit name it by.
  std::string source() const { return "policy:" + id; }
  bool in_force(int64_t now_ms) const noexcept { return !expires_ms || *expires_ms > now_ms; }
  bool operator==(const PolicyRule&) const = default;
};

struct CentralPolicy {
  std::string version;  // the bridge's digest of the rows; "" when none was applied
  std::vector<PolicyRule> rules;
  bool operator==(const CentralPolicy&) const = default;
};

// Why a policy was refused; `rule` names the rule at fault ("" for the whole).
class PolicyRefused : public std::runtime_error {
 public:
  PolicyRefused(std::string rule, const std::string& why)
      : std::runtime_error(rule.empty() ? why : "rule " + rule + ": " + why),
        rule_(std::move(rule)) {}
  const std::string& rule() const noexcept { return rule_; }

 private:
  std::string rule_;
};

// {"version": "...", "rules": [...]} checked in full against the daemon's own
// protected globs. Throws PolicyRefused at the first fault.
CentralPolicy parse_policy(const nlohmann::json& policy,
                           const std::vector<std::string>& local_protected);
nlohmann::json to_json(const PolicyRule& rule);

// What is in force: the daemon's own settings with the rules in force at `now_ms`
// added.
struct EffectivePolicy {
  std::vector<std::string> protected_globs;  // the daemon's first, then the rules' new ones
  int64_t ask_ms = 0;                        // the policy's ask (0: none in force)
  std::string ask_rule;
  std::optional<int64_t> ttl_cap_ms;  // the lowest cap in force
  std::string ttl_cap_rule;
  std::vector<PolicyRule> auto_approve;
  std::optional<int64_t> next_expiry_ms;  // the next rule in force to expire
};

EffectivePolicy merge_policy(const std::vector<std::string>& local_protected,
                             const CentralPolicy& policy, int64_t now_ms);

// Ask mode as the gate should have it: the daemon's own when it is on (the mount's
// --ask or the task's `ask`), else the policy's. Never 0 while a rule says on.
int64_t effective_ask_ms(int64_t local_ms, const EffectivePolicy& policy) noexcept;

// A grant's TTL under the cap: the shorter of the two; the cap when the grant
// asked for none.
std::optional<int64_t> capped_ttl_ms(std::optional<int64_t> requested,
                                     const EffectivePolicy& policy) noexcept;

// Whether a path pattern may name something `protect` protects (conservative:
// true unless their leading literal segments differ somewhere).
bool may_overlap(std::string_view pattern, std::string_view protect) noexcept;

// The auto_approve rule that covers every one of a request's paths (normalized
// grant globs), or nullptr. An empty list (the whole tree), a path under
// `.longrun/` or a protected glob, or a wildcard path that is not one of the
// rule's globs exactly is never covered.
const PolicyRule* auto_approver(const EffectivePolicy& policy,
                                const std::vector<std::string>& request_paths) noexcept;

}  // namespace leasefs::gate

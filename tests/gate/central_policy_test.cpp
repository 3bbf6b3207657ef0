// Central policy only tightens: every attempt to loosen through it is refused
// (the whole policy) or has no effect on what the daemon does on its own.
#include "gate/central_policy.hpp"

#include <gtest/gtest.h>

#include "gate/protected_paths.hpp"

namespace leasefs::gate {
namespace {

using nlohmann::json;

const std::vector<std::string> kLocalProtected = {".git/hooks/**", ".git/config"};
constexpr int64_t kPolicyNow = 1'000'000;

json policy(json rules) {
  return {{"version", "v1"}, {"rules", std::move(rules)}};
}

std::string refusal(const json& p) {
  try {
    parse_policy(p, kLocalProtected);
  } catch (const PolicyRefused& e) {
    return e.what();
  }
  return "";
}

TEST(CentralPolicy, EachKindParsesAndMerges) {
  CentralPolicy p =
      parse_policy(policy({{{"id", 7}, {"kind", "protect"}, {"globs", {".env", "secrets/**"}}},
                           {{"id", "8"}, {"kind", "ask"}, {"timeout_s", 120}},
                           {{"id", "9"}, {"kind", "ttl_cap"}, {"seconds", 600}, {"owner", "sec"}},
                           {{"id", "10"},
                            {"kind", "auto_approve"},
                            {"globs", {"docs/**"}},
                            {"ops", {"write", "create"}}}}),
                   kLocalProtected);
  ASSERT_EQ(p.rules.size(), 4u);
  EXPECT_EQ(p.rules[0].id, "7");
  EXPECT_EQ(p.rules[2].owner, "sec");
  EffectivePolicy e = merge_policy(kLocalProtected, p, kPolicyNow);
  EXPECT_EQ(e.protected_globs,
            (std::vector<std::string>{".git/hooks/**", ".git/config", ".env", "secrets/**"}));
  EXPECT_EQ(e.ask_ms, 120'000);
  EXPECT_EQ(e.ttl_cap_ms, 600'000);
  ASSERT_EQ(e.auto_approve.size(), 1u);
  EXPECT_EQ(e.auto_approve[0].ops, kClassWrite | kClassCreate);
  EXPECT_EQ(to_json(p.rules[3]).value("source", ""), "policy:10");
}

TEST(CentralPolicy, UnknownKindAndMalformedRowsRefuseTheWhole) {
  // "unprotect" is no kind: there is no way to say less.
  EXPECT_NE(refusal(policy({{{"id", "1"}, {"kind", "protect"}, {"globs", {".env"}}},
                            {{"id", "2"}, {"kind", "unprotect"}, {"globs", {".git/config"}}}})),
            "");
  EXPECT_NE(refusal(policy({{{"id", "1"}, {"kind", "protect"}, {"globs", "notalist"}}})), "");
  EXPECT_NE(refusal(policy({{{"id", "1"}, {"kind", "protect"}, {"globs", {"../up"}}}})), "");
  EXPECT_NE(refusal(policy({{{"id", "1"}, {"kind", "protect"}, {"globs", json::array()}}})), "");
  EXPECT_NE(refusal(policy({{{"kind", "protect"}, {"globs", {".env"}}}})), "");  // no id
  EXPECT_NE(refusal(policy({{{"id", "a b"}, {"kind", "ttl_cap"}, {"seconds", 5}}})), "");
  EXPECT_NE(refusal(policy({{{"id", "1"}, {"kind", "ttl_cap"}, {"seconds", 5}},
                            {{"id", "1"}, {"kind", "ttl_cap"}, {"seconds", 6}}})),
            "");
  EXPECT_NE(refusal(policy({{{"id", "1"}, {"kind", "ttl_cap"}, {"seconds", "5"}}})), "");
  EXPECT_NE(refusal(policy({{{"id", "1"}, {"kind", "ttl_cap"}, {"seconds", 5}, {"extra", 1}}})),
            "");
  EXPECT_NE(refusal(policy({"not an object"})), "");
  EXPECT_NE(refusal(json{{"rules", json::array()}}), "");  // no version
  EXPECT_NE(refusal(json{{"version", "v"}, {"rules", json::array()}, {"loosen", true}}), "");
  const std::string why = refusal(policy({{{"id", "5"}, {"kind", "nope"}}}));
  EXPECT_NE(why.find("rule 5"), std::string::npos) << why;
  EXPECT_NE(why.find("unknown rule kind"), std::string::npos) << why;
}

TEST(CentralPolicy, AskCannotBeTurnedOff) {
  EXPECT_NE(refusal(policy({{{"id", "1"}, {"kind", "ask"}, {"timeout_s", 0}}})), "");
  EXPECT_NE(refusal(policy({{{"id", "1"}, {"kind", "ask"}, {"on", false}}})), "");
  EXPECT_NE(refusal(policy({{{"id", "1"}, {"kind", "ask"}, {"timeout_s", -5}}})), "");
  // A policy's ask never replaces the daemon's own when that is on, and no merge gives 0.
  CentralPolicy p =
      parse_policy(policy({{{"id", "1"}, {"kind", "ask"}, {"timeout_s", 30}}}), kLocalProtected);
  EffectivePolicy e = merge_policy(kLocalProtected, p, kPolicyNow);
  EXPECT_EQ(effective_ask_ms(0, e), 30'000);
  EXPECT_EQ(effective_ask_ms(90'000, e), 90'000);
  EXPECT_EQ(effective_ask_ms(0, merge_policy(kLocalProtected, CentralPolicy{}, kPolicyNow)), 0);
}

TEST(CentralPolicy, TtlCapOnlyShortens) {
  EXPECT_NE(refusal(policy({{{"id", "1"}, {"kind", "ttl_cap"}, {"seconds", 0}}})), "");
  CentralPolicy p = parse_policy(policy({{{"id", "1"}, {"kind", "ttl_cap"}, {"seconds", 3600}},
                                         {{"id", "2"}, {"kind", "ttl_cap"}, {"seconds", 60}}}),
                                 kLocalProtected);
  EffectivePolicy e = merge_policy(kLocalProtected, p, kPolicyNow);
  EXPECT_EQ(e.ttl_cap_ms, 60'000);  // the lowest
  EXPECT_EQ(e.ttl_cap_rule, "2");
  EXPECT_EQ(capped_ttl_ms(10'000, e), 10'000);  // a cap raises nothing
  EXPECT_EQ(capped_ttl_ms(600'000, e), 60'000);
  EXPECT_EQ(capped_ttl_ms(std::nullopt, e), 60'000);
  EXPECT_EQ(capped_ttl_ms(std::nullopt, merge_policy(kLocalProtected, CentralPolicy{}, kPolicyNow)),
            std::nullopt);
}

TEST(CentralPolicy, ProtectedOnlyGrowsAndLocalStays) {
  // A protect rule naming the daemon's own glob adds nothing, and the local ones stay
  // whatever the policy says.
  CentralPolicy p =
      parse_policy(policy({{{"id", "1"}, {"kind", "protect"}, {"globs", {".git/config", "a/**"}}}}),
                   kLocalProtected);
  EffectivePolicy e = merge_policy(kLocalProtected, p, kPolicyNow);
  EXPECT_EQ(e.protected_globs, (std::vector<std::string>{".git/hooks/**", ".git/config", "a/**"}));
  EXPECT_EQ(merge_policy(kLocalProtected, CentralPolicy{}, kPolicyNow).protected_globs,
            kLocalProtected);
}

TEST(CentralPolicy, AutoApproveNeverCoversLongrunOrAProtectedGlob) {
  auto aa = [](json globs) {
    return policy({{{"id", "3"}, {"kind", "auto_approve"}, {"globs", globs}, {"ops", {"write"}}}});
  };
  EXPECT_NE(refusal(aa({".longrun/**"})), "");
  EXPECT_NE(refusal(aa({".longrun/state.json"})), "");
  EXPECT_NE(refusal(aa({"**"})), "");
  EXPECT_NE(refusal(aa({"*.md"})), "");  // could be .git/... at a wildcard's will
  EXPECT_NE(refusal(aa({".git/**"})), "");
  EXPECT_NE(refusal(aa({".git/config"})), "");
  EXPECT_NE(refusal(aa({"docs/**", ".git/hooks/pre-commit"})), "");
  EXPECT_NE(refusal(aa({".git"})), "");  // the directory above them
  // A protect rule of the same policy counts, in force or not.
  EXPECT_NE(
      refusal(policy(
          {{{"id", "1"}, {"kind", "protect"}, {"globs", {"docs/secret/**"}}, {"expires_ms", 1}},
           {{"id", "3"}, {"kind", "auto_approve"}, {"globs", {"docs/**"}}, {"ops", {"write"}}}})),
      "");
  EXPECT_NE(refusal(policy({{{"id", "3"},
                             {"kind", "auto_approve"},
                             {"globs", {"docs/**"}},
                             {"ops", json::array()}}})),
            "");
  EXPECT_NE(
      refusal(policy(
          {{{"id", "3"}, {"kind", "auto_approve"}, {"globs", {"docs/**"}}, {"ops", {"exec"}}}})),
      "");
  EXPECT_EQ(refusal(aa({"docs/**", "src/gen/*.c"})), "");
}

TEST(CentralPolicy, AutoApproverCoversOnlyWhatItNames) {
  CentralPolicy p = parse_policy(
      policy({{{"id", "3"}, {"kind", "auto_approve"}, {"globs", {"docs/**"}}, {"ops", {"write"}}}}),
      kLocalProtected);
  EffectivePolicy e = merge_policy(kLocalProtected, p, kPolicyNow);
  ASSERT_NE(auto_approver(e, {"docs/a.md"}), nullptr);
  EXPECT_EQ(auto_approver(e, {"docs/a.md"})->id, "3");
  EXPECT_NE(auto_approver(e, {"docs/**"}), nullptr);  // the rule's own glob
  EXPECT_EQ(auto_approver(e, {}), nullptr);           // the whole tree
  EXPECT_EQ(auto_approver(e, {"docs/a.md", "src/a.c"}), nullptr);
  EXPECT_EQ(auto_approver(e, {"docs/*/x"}), nullptr);  // a wildcard not its own
  EXPECT_EQ(auto_approver(e, {".longrun/state.json"}), nullptr);
  EXPECT_EQ(auto_approver(e, {".git/config"}), nullptr);
  // Checked again at the request against the protected set as it is then.
  e.protected_globs.push_back("**/.env");
  EXPECT_EQ(auto_approver(e, {"docs/.env"}), nullptr);
  EXPECT_EQ(auto_approver(e, {"docs/**"}), nullptr);
  EXPECT_NE(auto_approver(e, {"docs/a.md"}), nullptr);
}

TEST(CentralPolicy, ExpiredRulesStopApplying) {
  CentralPolicy p = parse_policy(
      policy(
          {{{"id", "1"}, {"kind", "protect"}, {"globs", {".env"}}, {"expires_ms", kPolicyNow + 10}},
           {{"id", "2"}, {"kind", "ttl_cap"}, {"seconds", 5}, {"expires_ms", kPolicyNow + 20}},
           {{"id", "3"}, {"kind", "ask"}, {"timeout_s", 5}, {"expires_ms", kPolicyNow}}}),
      kLocalProtected);
  EffectivePolicy before = merge_policy(kLocalProtected, p, kPolicyNow);
  EXPECT_EQ(before.protected_globs.size(), 3u);
  EXPECT_EQ(before.ask_ms, 0);  // expired at kPolicyNow
  EXPECT_EQ(before.next_expiry_ms, kPolicyNow + 10);
  EffectivePolicy after = merge_policy(kLocalProtected, p, kPolicyNow + 20);
  EXPECT_EQ(after.protected_globs, kLocalProtected);
  EXPECT_EQ(after.ttl_cap_ms, std::nullopt);
  EXPECT_EQ(after.next_expiry_ms, std::nullopt);
}

TEST(CentralPolicy, MayOverlapIsConservative) {
  EXPECT_TRUE(may_overlap("**", ".git/config"));
  EXPECT_TRUE(may_overlap(".git", ".git/config"));
  EXPECT_TRUE(may_overlap(".git/", ".git/config"));
  EXPECT_TRUE(may_overlap("src/**", "**/.env"));
  EXPECT_FALSE(may_overlap("src/**", ".git/hooks/**"));
  EXPECT_FALSE(may_overlap("docs/a.md", ".longrun/**"));
}

}  // namespace
}  // namespace leasefs::gate

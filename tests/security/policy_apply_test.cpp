// Central policy (policy.apply) against the real daemon and mount. Attack
// classes: the agent sending a policy of its own (a second uid, refused); a
// policy that would loosen, or a malformed one, taking effect in part (refused
// whole, audited, the policy in force stays); a grant outliving the cap; a
// protected path opened by a broad grant; an auto-approval that is not recorded
// as the policy's, or that reaches a protected path; a rule that outlives its
// expiry while no bridge comes to say so. Every write is a real shell
// redirection by uid 65534.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `sh -c SCRIPT` as the agent (uid 65534); its exit status.
int agent_sh(const std::string& script) {
  return wait_child(spawn_agent([script] {
                      ::chdir("/");
                      ::execlp("sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
                      return 127;
                    }),
                    30000);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class PolicyApply : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* dir : {"/conf", "/docs", "/src"}) {
      ASSERT_EQ(::mkdir((d_.root() + dir).c_str(), 0777), 0);
      ::chmod((d_.root() + dir).c_str(), 0777);
    }
    // Made before the mount: once it is up, the test's own writes are gated too.
    for (const char* file : {"/docs/kept.md", "/docs/gone.md"}) {
      std::ofstream(d_.root() + file) << "old\n";
      ::chmod((d_.root() + file).c_str(), 0666);
    }
    auto m = d_.mount();
    ASSERT_EQ(m.exit_code, 0) << m.output;
    root_ = std::make_unique<ControlClient>(d_.socket());
    ASSERT_TRUE(root_->call("start", {{"description", "central policy"}}).value("ok", false));
  }

  json apply(json rules, const std::string& version) {
    return root_->call("policy.apply", {{"version", version}, {"rules", std::move(rules)}});
  }
  json status() { return root_->call("status")["result"]; }
  // The agent writes `text` to ROOT/rel with a shell redirection: 0 when it went through.
  int agent_write(const std::string& rel, const std::string& text) {
    return agent_sh("echo " + text + " > " + d_.root() + "/" + rel);
  }
  // The audit's events of `type`, once at least `n` are in the file (it is written
  // in batches, a moment after the reply).
  std::vector<json> audited(const std::string& type, size_t n = 1) {
    std::vector<json> out;
    for (int i = 0; i < 200; ++i) {
      out.clear();
      std::ifstream in(d_.root() + "/.longrun/audit.jsonl");
      for (std::string line; std::getline(in, line);) {
        json rec = json::parse(line, nullptr, false);
        if (!rec.is_discarded() && rec["event"].value("type", "") == type) {
          out.push_back(rec["event"]);
        }
      }
      if (out.size() >= n) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return out;
  }

  ControlDaemon d_;
  std::unique_ptr<ControlClient> root_;
};

TEST_F(PolicyApply, FromTheAgentsUidIsRefused) {
  const json rules = json::array({{{"id", "1"}, {"kind", "ttl_cap"}, {"seconds", 1}}});
  const json request = {
      {"id", 1}, {"cmd", "policy.apply"}, {"args", {{"version", "agent"}, {"rules", rules}}}};
  const std::string line = request.dump() + "\n";
  const std::string socket = d_.socket();
  const int rc = wait_child(spawn_agent([socket, line] {
                              json reply =
                                  json::parse(call_line(socket, line, 10000), nullptr, false);
                              if (reply.is_discarded()) return 2;
                              if (reply.value("ok", true)) return 3;  // applied
                              return reply["error"].value("code", "") == "forbidden" ? 0 : 4;
                            }),
                            30000);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(status()["policy"].value("version", "?"), "");
}

TEST_F(PolicyApply, ProtectRuleRefusesAWriteABroadGrantAllowed) {
  ASSERT_TRUE(root_->call("grant", {{"reason", "everything"}}).value("ok", false));
  ASSERT_EQ(agent_write("conf/app.env", "before"), 0);  // the lease opens it now

  json reply =
      apply({{{"id", "7"}, {"kind", "protect"}, {"globs", {"conf/**"}}, {"owner", "sec"}}}, "v1");
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  EXPECT_NE(agent_write("conf/app.env", "after"), 0);
  EXPECT_EQ(read_text(d_.root() + "/conf/app.env"), "before\n");
  EXPECT_EQ(agent_write("src/a.c", "still"), 0);  // the grant still holds elsewhere

  const json s = status();
  EXPECT_EQ(s["policy"].value("version", ""), "v1");
  bool shown = false;
  for (const json& p : s["policy"]["in_force"]["protected"]) {
    if (p.value("glob", "") == "conf/**") shown = p.value("source", "") == "policy:7";
  }
  EXPECT_TRUE(shown) << s["policy"].dump();
  auto applied = audited("policy_applied");
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0].value("version", ""), "v1");
  EXPECT_EQ(applied[0]["rules"], json({"7"}));

  // A policy with one bad rule is refused whole: its good rule does not apply,
  // the one in force stays.
  reply = apply({{{"id", "8"}, {"kind", "protect"}, {"globs", {"src/**"}}},
                 {{"id", "9"}, {"kind", "unprotect"}, {"globs", {"conf/**"}}}},
                "v2");
  EXPECT_FALSE(reply.value("ok", true));
  EXPECT_EQ(reply["error"].value("code", ""), "invalid_argument");
  EXPECT_NE(reply["error"].value("message", "").find("rule 9"), std::string::npos) << reply.dump();
  EXPECT_EQ(status()["policy"].value("version", ""), "v1");
  EXPECT_EQ(agent_write("src/b.c", "open"), 0);
  EXPECT_NE(agent_write("conf/app.env", "again"), 0);
  auto refused = audited("policy_refused");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].value("rule", ""), "9");

  // Nor can a policy that turns ask mode off, or auto-approves .longrun/.
  EXPECT_FALSE(apply({{{"id", "1"}, {"kind", "ask"}, {"timeout_s", 0}}}, "v3").value("ok", true));
  EXPECT_FALSE(
      apply(
          {{{"id", "1"}, {"kind", "auto_approve"}, {"globs", {".longrun/**"}}, {"ops", {"write"}}}},
          "v4")
          .value("ok", true));
  EXPECT_EQ(status()["policy"].value("version", ""), "v1");
}

TEST_F(PolicyApply, TtlCapShortensALaterGrant) {
  json reply = apply({{{"id", "3"}, {"kind", "ttl_cap"}, {"seconds", 60}}}, "cap");
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  json g = root_->call("grant", {{"reason", "ten minutes"}, {"ttl", "10m"}});
  ASSERT_TRUE(g.value("ok", false)) << g.dump();
  const json grant = g["result"]["grant"];
  EXPECT_EQ(grant.value("expires_ms", int64_t{0}) - grant.value("issued_ms", int64_t{0}), 60000)
      << grant.dump();
  // A grant that asked for less keeps its own.
  g = root_->call("grant", {{"reason", "ten seconds"}, {"ttl", "10s"}});
  EXPECT_EQ(g["result"]["grant"].value("expires_ms", int64_t{0}) -
                g["result"]["grant"].value("issued_ms", int64_t{0}),
            10000);
  EXPECT_EQ(status()["policy"]["in_force"].value("ttl_cap_source", ""), "policy:3");

  // A cap that ends a grant: once it passed, the agent's write is refused.
  reply = apply({{{"id", "4"}, {"kind", "ttl_cap"}, {"seconds", 1}}}, "cap1");
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  for (int i = 0; i < 200 && !status()["grants"].empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(status()["grants"].empty());
  EXPECT_NE(agent_write("src/late.c", "x"), 0);
}

TEST_F(PolicyApply, AutoApproveGrantsAndAuditsItsSource) {
  json reply = apply({{{"id", "12"},
                       {"kind", "auto_approve"},
                       {"globs", {"docs/**"}},
                       {"ops", {"write", "create"}}}},
                     "aa");
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  EXPECT_NE(agent_write("docs/a.md", "x"), 0);  // no lease yet

  // The agent asks, through leasectl, as it would.
  const std::string ask = std::string(LEASECTL_BIN) + " --socket " + d_.socket() +
                          " request --reason 'the docs' --path docs/a.md";
  ASSERT_EQ(agent_sh(ask), 0);
  EXPECT_EQ(agent_write("docs/a.md", "approved"), 0);
  EXPECT_EQ(read_text(d_.root() + "/docs/a.md"), "approved\n");
  EXPECT_NE(agent_write("src/a.c", "x"), 0);  // only what it asked for

  auto decisions = audited("decision");
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].value("source", ""), "policy:12");
  EXPECT_EQ(decisions[0].value("decision", ""), "approve");

  // A path outside the rule, or under a protected glob, waits for a person.
  ASSERT_EQ(agent_sh(std::string(LEASECTL_BIN) + " --socket " + d_.socket() +
                     " request --reason 'hooks' --path .git/config"),
            0);
  ASSERT_EQ(agent_sh(std::string(LEASECTL_BIN) + " --socket " + d_.socket() +
                     " request --reason 'both' --path docs/b.md --path src/b.c"),
            0);
  EXPECT_EQ(status()["pending_requests"].size(), 2u);
  EXPECT_EQ(audited("decision").size(), 1u);
}

TEST_F(PolicyApply, AnExpiredRuleStopsWithNoBridge) {
  ASSERT_TRUE(root_->call("grant", {{"reason", "everything"}}).value("ok", false));
  json reply = apply({{{"id", "5"},
                       {"kind", "protect"},
                       {"globs", {"conf/**"}},
                       {"expires_ms", wall_ms() + 1500}}},
                     "exp");
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  EXPECT_NE(agent_write("conf/x.env", "early"), 0);
  for (int i = 0; i < 300 && !status()["policy"]["rules"].empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(status()["policy"]["rules"].empty());
  EXPECT_EQ(agent_write("conf/x.env", "late"), 0);
  auto expired = audited("policy_expired");
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0]["rules"], json({"5"}));
}

}  // namespace
}  // namespace leasefs::test

namespace leasefs::test {
namespace {

TEST_F(PolicyApply, ARestartedDaemonEnforcesThePolicyBeforeAnyBridgeIsBack) {
  json reply = apply({{{"id", "7"}, {"kind", "protect"}, {"globs", {"conf/**"}}}}, "kept");
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  root_.reset();
  ASSERT_TRUE(d_.stop_with(SIGTERM, 10'000));
  auto m = d_.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  root_ = std::make_unique<ControlClient>(d_.socket());
  EXPECT_EQ(status()["policy"].value("version", ""), "kept");
  ASSERT_TRUE(root_->call("grant", {{"reason", "everything"}}).value("ok", false));
  EXPECT_NE(agent_write("conf/app.env", "after"), 0);
  EXPECT_EQ(agent_write("src/a.c", "open"), 0);
}

TEST_F(PolicyApply, AskTurnedOnByPolicyStaysOnWhenAnApproverTurnsItOff) {
  EXPECT_FALSE(status()["ask"].value("on", true));
  json reply = apply({{{"id", "2"}, {"kind", "ask"}, {"timeout_s", 30}}}, "ask");
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  EXPECT_TRUE(status()["ask"].value("on", false));
  EXPECT_EQ(status()["ask"].value("timeout_ms", 0), 30000);
  EXPECT_EQ(status()["policy"]["in_force"].value("ask_source", ""), "policy:2");
  ASSERT_TRUE(root_->call("ask", {{"wait", "off"}}).value("ok", false));
  EXPECT_TRUE(status()["ask"].value("on", false));
  // The task's own, when on, is the daemon's: longer or shorter, it stands.
  ASSERT_TRUE(root_->call("ask", {{"wait", "2m"}}).value("ok", false));
  EXPECT_EQ(status()["ask"].value("timeout_ms", 0), 120000);
  EXPECT_EQ(status()["policy"]["in_force"].value("ask_source", ""), "local");
}

}  // namespace
}  // namespace leasefs::test

namespace leasefs::test {
namespace {

// Ask mode (the policy's own) parks an open for writing; an auto_approve rule
// that covers the path and the op answers it at once, as the policy.
TEST_F(PolicyApply, AnAskAutoApprovedGoesThroughOnlyForTheRulesOps) {
  json reply =
      apply({{{"id", "2"}, {"kind", "ask"}, {"timeout_s", 2}},
             {{"id", "12"}, {"kind", "auto_approve"}, {"globs", {"docs/**"}}, {"ops", {"write"}}}},
            "ask-aa");
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  EXPECT_EQ(agent_write("docs/kept.md", "new"), 0);
  EXPECT_EQ(read_text(d_.root() + "/docs/kept.md"), "new\n");
  auto decisions = audited("decision");
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].value("source", ""), "policy:12");
  // An unlink is not among the rule's ops: refused (asked, and not approved).
  EXPECT_NE(agent_sh("rm -f " + d_.root() + "/docs/gone.md"), 0);
  EXPECT_EQ(read_text(d_.root() + "/docs/gone.md"), "old\n");
  const json s = status();
  EXPECT_EQ(s["grants"].size(), 1u) << s["grants"].dump();  // the write's alone
  ASSERT_EQ(s["pending_requests"].size(), 1u) << s.dump();  // the unlink's, for a person
  EXPECT_EQ(s["pending_requests"][0]["paths"], json({"docs/gone.md"}));
}

}  // namespace
}  // namespace leasefs::test

namespace leasefs::test {
namespace {

// A write parked by the policy's ask mode is refused once the policy no longer
// has it, not left waiting out a wait nobody will answer for.
TEST_F(PolicyApply, AParkedWriteEndsWhenThePolicysAskGoes) {
  json reply = apply({{{"id", "2"}, {"kind", "ask"}, {"timeout_s", 600}}}, "ask");
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  const std::string script = "echo new > " + d_.root() + "/docs/kept.md";
  const pid_t agent = spawn_agent([script] {
    ::chdir("/");
    ::execlp("sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    return 127;
  });
  bool parked = false;
  for (int i = 0; i < 400 && !parked; ++i) {
    parked = status()["ask"].value("waiting", 0) == 1;
    if (!parked) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(parked) << status()["ask"].dump();
  reply = apply(json::array(), "none");
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  const int rc = wait_child(agent, 60'000);
  EXPECT_NE(rc, -2) << "the parked write was still waiting";
  EXPECT_NE(rc, 0);
  EXPECT_EQ(read_text(d_.root() + "/docs/kept.md"), "old\n");
}

}  // namespace
}  // namespace leasefs::test

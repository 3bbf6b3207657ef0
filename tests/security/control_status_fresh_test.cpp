// Attack class: misleading the approver with a status from before a change.
// status's reply is kept while nothing it shows changes (control/status_reply.hpp);
// the agent asks for status itself (so that a reply is kept), then acts between
// two of the approver's status calls: the approver's next status shows what it
// did, and what the approver did since.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

// The approver's status until `shows` holds of it; the last one either way. A
// bound for a hang (a refusal travels through the reporting thread): not a
// measure of speed.
json status_until(ControlClient& c, const std::function<bool(const json&)>& shows) {
  json result;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  do {
    result = c.call("status", json::object()).value("result", json());
    if (shows(result)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < give_up);
  return result;
}

// The agent's status, so that the daemon has a reply to keep.
bool agent_status(ControlClient& c) {
  return c.call("status", json::object()).value("ok", false);
}

TEST(ControlStatusFresh, WhatTheAgentDidIsInTheApproversNextStatus) {
  ControlDaemon d;
  ASSERT_EQ(::mkdir((d.root() + "/open").c_str(), 0777), 0);
  ::chmod((d.root() + "/open").c_str(), 0777);
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("start", {{"description", "fresh status"}}).value("ok", false));
  const json before = root.call("status", json::object())["result"];
  ASSERT_TRUE(before["recent_refusals"].empty()) << before.dump();

  // A refused create, between two status calls of the agent's own.
  pid_t agent = spawn_agent([&] {
    ControlClient c(d.socket());
    if (!agent_status(c)) return 1;
    int fd = ::open((d.root() + "/open/refused.txt").c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) {
      ::close(fd);
      return 2;  // the gate let it through: nothing to test
    }
    return agent_status(c) ? 0 : 3;
  });
  ASSERT_EQ(wait_child(agent, 10'000), 0);
  json s = status_until(root, [](const json& r) { return !r["recent_refusals"].empty(); });
  ASSERT_EQ(s["recent_refusals"].size(), 1u) << s.dump();
  EXPECT_NE(s["recent_refusals"][0].value("path", "").find("refused.txt"), std::string::npos)
      << s.dump();
  EXPECT_GT(s["refusals_total"].get<uint64_t>(), before["refusals_total"].get<uint64_t>());

  // A request, asked right after a status.
  agent = spawn_agent([&] {
    ControlClient c(d.socket());
    if (!agent_status(c)) return 1;
    if (!c.call("request", {{"reason", "need open/"}, {"paths", {"open/**"}}}).value("ok", false))
      return 2;
    return agent_status(c) ? 0 : 3;
  });
  ASSERT_EQ(wait_child(agent, 10'000), 0);
  s = root.call("status", json::object())["result"];
  ASSERT_EQ(s["pending_requests"].size(), 1u) << s.dump();
  EXPECT_EQ(s["pending_requests"][0]["requester_uid"], kAgentUid);
  EXPECT_EQ(s["access_mode"], "read_only");

  // The approval shows at once, to the approver and to the agent.
  ASSERT_TRUE(root.call("approve", {{"id", s["pending_requests"][0]["id"]}}).value("ok", false));
  s = root.call("status", json::object())["result"];
  EXPECT_TRUE(s["pending_requests"].empty()) << s.dump();
  ASSERT_EQ(s["grants"].size(), 1u) << s.dump();
  EXPECT_EQ(s["access_mode"], "leased");
  agent = spawn_agent([&] {
    ControlClient c(d.socket());
    json r = c.call("status", json::object())["result"];
    return r["access_mode"] == "leased" && r["grants"].size() == 1 ? 0 : 1;
  });
  ASSERT_EQ(wait_child(agent, 10'000), 0);

  // The turn ends the lease: no status, the agent's or the approver's, keeps it.
  ASSERT_TRUE(root.call("turn", json::object()).value("ok", false));
  agent = spawn_agent([&] {
    ControlClient c(d.socket());
    json r = c.call("status", json::object())["result"];
    return r["access_mode"] == "read_only" && r["grants"].empty() ? 0 : 1;
  });
  ASSERT_EQ(wait_child(agent, 10'000), 0);
  s = root.call("status", json::object())["result"];
  EXPECT_TRUE(s["grants"].empty()) << s.dump();
  EXPECT_EQ(s["turn"], before["turn"].get<uint64_t>() + 1);
}

}  // namespace
}  // namespace leasefs::test

// Attack class: hiding what was allowed behind a flood of refusals. The agent
// (a second uid) runs many processes that hammer refused writes while an
// approved writer makes N leased writes: every one of the N must reach the
// audit's hash chain (the closed files, and each create, rename, unlink, mkdir
// and chmod as an "allowed" record), and the refusal counts in the chain must add up to the
// refusals the agent really got. A loss that does happen (the failpoint
// "audit.lose_batch" loses one batch) must be recorded in the chain and make
// `leasectl audit verify` fail, saying how many were lost.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

constexpr int kWrites = 300;
constexpr int kFlooders = 6;
constexpr int kAttemptsEach = 4000;

struct Chain {
  std::set<std::string> closed_paths;       // write_closed records under ok/
  uint64_t agent_refusals = 0;              // sum of the counts of the agent's refusals
  std::map<std::string, uint64_t> allowed;  // op -> sum of counts, under ok/
  uint64_t renames_with_target = 0;
};

Chain read_chain(const std::string& root) {
  Chain c;
  std::ifstream in(root + "/.longrun/audit.jsonl");
  for (std::string line; std::getline(in, line);) {
    json rec = json::parse(line, nullptr, false);
    if (rec.is_discarded()) continue;
    const json& ev = rec["event"];
    const std::string type = ev.value("type", "");
    if (type == "write_closed" && ev.value("path", "").starts_with("ok/")) {
      c.closed_paths.insert(ev["path"].get<std::string>());
    } else if (type == "refusal" && ev.value("uid", 0) == static_cast<int>(kAgentUid)) {
      c.agent_refusals += ev.value("count", uint64_t{0});
    } else if (type == "allowed" && ev.value("path", "").starts_with("ok/")) {
      c.allowed[ev.value("op", "")] += ev.value("count", uint64_t{0});
      if (ev.value("op", "") == "rename" && ev.value("target", "").starts_with("ok/r")) {
        ++c.renames_with_target;
      }
    }
  }
  return c;
}

TEST(ControlAuditLoss, RefusalFloodLosesNoAllowedWriteAndCountsAddUp) {
  ControlDaemon d;
  ASSERT_EQ(::mkdir((d.root() + "/ok").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((d.root() + "/open").c_str(), 0777), 0);
  ::chmod((d.root() + "/open").c_str(), 0777);
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("start", {{"description", "audit flood"}}).value("ok", false));
  ASSERT_TRUE(
      root.call("grant", {{"reason", "the writer"}, {"paths", {"ok/**"}}}).value("ok", false));

  // The flood: each process counts the refusals (EACCES) it got and reports the
  // number through a pipe.
  std::vector<pid_t> flooders;
  std::vector<int> pipes;
  for (int f = 0; f < kFlooders; ++f) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    pid_t pid = spawn_agent([&, f] {
      ::close(p[0]);
      uint64_t refused = 0;
      for (int i = 0; i < kAttemptsEach; ++i) {
        const std::string path =
            d.root() + "/open/f" + std::to_string(f) + "_" + std::to_string(i % 500);
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) {
          ::close(fd);
          return 3;  // the gate let a refused write through
        }
        if (errno == EACCES) ++refused;
      }
      const std::string n = std::to_string(refused);
      return ::write(p[1], n.data(), n.size()) == static_cast<ssize_t>(n.size()) ? 0 : 4;
    });
    ::close(p[1]);
    flooders.push_back(pid);
    pipes.push_back(p[0]);
  }

  // The approved writer, at the same time.
  for (int i = 0; i < kWrites; ++i) {
    const std::string path = d.root() + "/ok/w" + std::to_string(i);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
    ASSERT_EQ(::write(fd, "x", 1), 1);
    ASSERT_EQ(::close(fd), 0);
  }
  // Other mutations, each of which must reach the chain too.
  constexpr int kRenames = 50, kUnlinks = 25;
  for (int i = 0; i < kRenames; ++i) {
    const std::string w = d.root() + "/ok/w" + std::to_string(i);
    ASSERT_EQ(::rename(w.c_str(), (d.root() + "/ok/r" + std::to_string(i)).c_str()), 0);
  }
  for (int i = 0; i < kUnlinks; ++i) {
    ASSERT_EQ(::unlink((d.root() + "/ok/r" + std::to_string(i)).c_str()), 0);
  }
  ASSERT_EQ(::mkdir((d.root() + "/ok/dir").c_str(), 0755), 0);
  ASSERT_EQ(::chmod((d.root() + "/ok/w299").c_str(), 0600), 0);

  uint64_t refused_total = 0;
  for (int f = 0; f < kFlooders; ++f) {
    EXPECT_EQ(wait_child(flooders[f], 120'000), 0);
    char buf[32] = {};
    ssize_t n = ::read(pipes[f], buf, sizeof buf - 1);
    ::close(pipes[f]);
    ASSERT_GT(n, 0);
    refused_total += std::strtoull(buf, nullptr, 10);
  }
  EXPECT_EQ(refused_total, uint64_t{kFlooders} * kAttemptsEach);

  // Wait (bounded) for the chain to catch up: coalesced refusals are published
  // once per interval.
  Chain chain;
  for (int i = 0; i < 600; ++i) {
    chain = read_chain(d.root());
    if (chain.closed_paths.size() == kWrites && chain.agent_refusals >= refused_total &&
        chain.allowed["setattr"] >= 1) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(chain.closed_paths.size(), static_cast<size_t>(kWrites));
  EXPECT_EQ(chain.agent_refusals, refused_total);
  EXPECT_EQ(chain.allowed["create"], uint64_t{kWrites});
  EXPECT_EQ(chain.allowed["rename"], uint64_t{kRenames});
  EXPECT_EQ(chain.renames_with_target, uint64_t{kRenames});
  EXPECT_EQ(chain.allowed["unlink"], uint64_t{kUnlinks});
  EXPECT_EQ(chain.allowed["mkdir"], 1u);
  EXPECT_EQ(chain.allowed["setattr"], 1u);

  RunResult verify = run_argv({LEASECTL_BIN, "--socket", d.socket(), "audit", "verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
}

TEST(ControlAuditLoss, ALostBatchIsInTheChainAndVerifyFailsSayingHowMany) {
  ControlDaemon d;
  ::setenv("LEASEFS_FAILPOINT", "audit.lose_batch", 1);
  auto m = d.mount();
  ::unsetenv("LEASEFS_FAILPOINT");
  ASSERT_EQ(m.exit_code, 0) << m.output;
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("start", {{"description", "lose one"}}).value("ok", false));
  // Later events carry the record of the loss into the chain.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(root.call("turn").value("ok", false));

  bool recorded = false;
  uint64_t lost = 0;
  for (int i = 0; i < 200 && !recorded; ++i) {
    std::ifstream in(d.root() + "/.longrun/audit.jsonl");
    for (std::string line; std::getline(in, line);) {
      json rec = json::parse(line, nullptr, false);
      if (!rec.is_discarded() && rec["event"].value("type", "") == "audit_lost") {
        recorded = true;
        lost = rec["event"].value("count", uint64_t{0});
      }
    }
    if (recorded) break;
    // The lost batch may have held every event so far (a turn answers before its
    // audit record is written): a later event carries the loss into the chain.
    ASSERT_TRUE(root.call("turn").value("ok", false));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(recorded) << "no audit_lost record in the chain";
  EXPECT_GT(lost, 0u);

  RunResult verify = run_argv({LEASECTL_BIN, "--socket", d.socket(), "audit", "verify"});
  EXPECT_NE(verify.exit_code, 0) << verify.output;
  EXPECT_NE(verify.output.find(std::to_string(lost) + " event(s) were lost"), std::string::npos)
      << verify.output;
}

}  // namespace
}  // namespace leasefs::test

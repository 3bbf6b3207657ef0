#include "report/pump.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace leasefs::report {
namespace {

Allowed allowed(gate::Op op, const std::string& path, pid_t pid = 10) {
  Allowed a;
  a.op = op;
  a.path = path;
  a.caller.uid = 1000;
  a.caller.pid = pid;
  a.grant_id = "G_0001";
  return a;
}

// Allowed mutations of one key are counted, never folded into another, and a
// batch reaches the bus in the order its keys were first seen: what a person
// reading `watch` or the audit chain sees is the order things happened.
TEST(Pump, AllowedAreCountedPerKeyAndPublishedInTheOrderFirstSeen) {
  EventBus bus;
  auto audit = bus.subscribe_lossless(64);
  Pump pump({}, bus);
  // Counted before the worker starts, so that all six are in one batch: a
  // running worker may publish a batch after any of them.
  pump.on_allowed(allowed(gate::Op::kWrite, "src/z.c"));
  pump.on_allowed(allowed(gate::Op::kCreate, "src/a.c"));
  pump.on_allowed(allowed(gate::Op::kWrite, "src/z.c"));
  pump.on_allowed(allowed(gate::Op::kWrite, "src/z.c", 11));  // another process
  pump.on_allowed(allowed(gate::Op::kCreate, "src/a.c"));
  pump.on_allowed(allowed(gate::Op::kUnlink, "src/m.c"));
  pump.start();
  pump.stop();  // publishes what is counted
  std::vector<std::string> seen;
  while (auto e = audit->pop(std::chrono::milliseconds(0))) {
    const nlohmann::json v = e->value();
    if (v["type"] != "allowed") continue;
    seen.push_back(v["op"].get<std::string>() + " " + v["path"].get<std::string>() + " " +
                   std::to_string(v["pid"].get<int>()) + " x" +
                   std::to_string(v["count"].get<uint64_t>()));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"write src/z.c 10 x2", "create src/a.c 10 x2",
                                            "write src/z.c 11 x1", "unlink src/m.c 10 x1"}));
}

// Past kMaxAllowedKeys distinct keys the filesystem's thread waits for the
// worker to publish, and nothing is lost: every one reaches the bus once.
TEST(Pump, MoreKeysThanABatchHoldsAreAllPublished) {
  EventBus bus;
  auto audit = bus.subscribe_lossless(3 * Pump::kMaxAllowedKeys);
  Pump pump({}, bus);
  pump.start();
  const size_t n = 2 * Pump::kMaxAllowedKeys + 7;
  for (size_t i = 0; i < n; ++i) pump.on_allowed(allowed(gate::Op::kCreate, std::to_string(i)));
  pump.stop();
  size_t next = 0;
  while (auto e = audit->pop(std::chrono::milliseconds(0))) {
    const nlohmann::json v = e->value();
    if (v["type"] != "allowed") continue;
    EXPECT_EQ(v["path"], std::to_string(next)) << "out of order";
    EXPECT_EQ(v["count"], 1u);
    ++next;
  }
  EXPECT_EQ(next, n);
}

}  // namespace
}  // namespace leasefs::report

#include "gate/snapshot_cell.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "gate/gate.hpp"

namespace leasefs::gate {
namespace {

struct Value {
  uint64_t a;
  uint64_t b;  // always equal to a: a torn or freed read shows up as a != b
};

TEST(SnapshotCell, ReadersNeverSeeAHalfPublishedOrFreedValue) {
  SnapshotCell<Value> cell(std::make_unique<const Value>(Value{0, 0}));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0}, reads{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 4; ++i) {
    readers.emplace_back([&] {
      uint64_t last = 0;
      while (!stop.load()) {
        auto v = cell.read();
        if (v->a != v->b || v->a < last) bad.fetch_add(1);
        last = v->a;
        reads.fetch_add(1);
      }
    });
  }
  while (reads.load() < 1000) std::this_thread::yield();  // readers are running
  const uint64_t reads_before = reads.load();
  for (uint64_t n = 1; n <= 2000; ++n) cell.publish(std::make_unique<const Value>(Value{n, n}));
  while (reads.load() < reads_before + 1000) std::this_thread::yield();
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
  EXPECT_EQ(cell.read()->a, 2000u);
}

TEST(SnapshotCell, I6_ReadAfterPublishReturnsSeesTheNewValue) {
  Gate gate;
  GateSnapshot open;
  open.has_task = true;
  open.status = TaskStatus::kInProgress;
  open.turn = 1;
  open.grants.push_back(Grant{.id = "G_0001", .turn = 1});
  gate.publish(open);
  EXPECT_TRUE(gate.check(Op::kWrite, "a", {}).allowed);
  GateSnapshot revoked = open;
  revoked.turn = 2;
  gate.publish(revoked);
  auto v = gate.check(Op::kWrite, "a", {});
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, DenyReason::kStaleLease);
}

TEST(Gate, NeedsPathOnlyWithPathScopedGrants) {
  Gate gate;
  GateSnapshot s;
  s.has_task = true;
  s.status = TaskStatus::kInProgress;
  s.turn = 1;
  s.grants.push_back(Grant{.id = "G_0001", .turn = 1});
  gate.publish(s);
  EXPECT_FALSE(gate.needs_path());
  s.grants.push_back(Grant{.id = "G_0002", .turn = 1, .paths = {"src/**"}});
  gate.publish(s);
  EXPECT_TRUE(gate.needs_path());
}

}  // namespace
}  // namespace leasefs::gate

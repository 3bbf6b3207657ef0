// The audit writer: batches paced in a burst (base/batch_pacing.hpp) lose nothing.
#include "report/audit_writer.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>

#include "base/unique_fd.hpp"
#include "memory/audit_log.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::report {
namespace {

// More events than a batch holds, published faster than the writer syncs, then
// stop(): every one is in the chain, in order, and the chain verifies.
TEST(AuditWriter, EveryEventOfABurstReachesTheChainAndStopWritesTheRest) {
  constexpr int kEvents = 5000;
  static_assert(kEvents > 2 * AuditWriter::kMaxBatch);
  test::TempDir dir;
  memory::AuditLog log(dir.file("audit.jsonl"), dir.file("memory.db"),
                       memory::AuditLog::Options{.fsync = false});
  base::UniqueFd dir_fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir_fd);
  base::DiskReserve reserve(dir_fd.get(), "reserve");
  EventBus bus;
  AuditWriter writer(bus, log, reserve);
  for (int i = 0; i < kEvents; ++i) bus.publish({{"type", "burst"}, {"i", i}});
  writer.stop();
  EXPECT_EQ(log.count(), static_cast<size_t>(kEvents));
  const memory::VerifyResult result = log.verify();
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.records, static_cast<size_t>(kEvents));
}

}  // namespace
}  // namespace leasefs::report

#include "base/batch_pacing.hpp"

#include <gtest/gtest.h>

namespace leasefs::base {
namespace {

using namespace std::chrono_literals;
using Clock = BatchPacing::Clock;
constexpr BatchPacing kPacing{10ms, 100ms};

TEST(BatchPacing, TheFirstBatchAfterAQuietSpellWaitsOnlyTheGather) {
  const Clock::time_point first = Clock::now();
  EXPECT_EQ(kPacing.due(first, Clock::time_point{}), first + 10ms);
  EXPECT_EQ(kPacing.due(first, first - 101ms), first + 10ms);
}

TEST(BatchPacing, InABurstBatchesBeginAtLeastEveryApart) {
  const Clock::time_point first = Clock::now();
  EXPECT_EQ(kPacing.due(first, first - 5ms), first + 95ms);
  EXPECT_EQ(kPacing.due(first, first - 90ms), first + 10ms);
}

}  // namespace
}  // namespace leasefs::base

#include "base/duration_text.hpp"

#include <gtest/gtest.h>

namespace leasefs::base {
namespace {

TEST(DurationText, ShowsTheLargestUnitAndTheNextOne) {
  EXPECT_EQ(duration_text(7'200'000), "2h");
  EXPECT_EQ(duration_text(7'199'000), "1h 59m");
  EXPECT_EQ(duration_text(3'605'000), "1h");  // the seconds after a zero minute are dropped
  EXPECT_EQ(duration_text(90'000), "1m 30s");
  EXPECT_EQ(duration_text(45'000), "45s");
  EXPECT_EQ(duration_text(187'200'000), "2d 4h");
  EXPECT_EQ(duration_text(500), "500ms");
  EXPECT_EQ(duration_text(0), "0s");
  EXPECT_EQ(duration_text(-5), "0s");
}

}  // namespace
}  // namespace leasefs::base

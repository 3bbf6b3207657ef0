// status.md's writer: whatever it gathers, a flush finds the newest text in the
// file, and a stop writes it.
#include "state/status_file.hpp"

#include <gtest/gtest.h>

#include <string>

#include "state/longrun_dir.hpp"
#include "state/state_store.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::service {
namespace {

using test::TempDir;

TEST(StatusFile, AFlushInTheMiddleOfABurstFindsTheNewestText) {
  TempDir root;
  LongrunDir dir(root.fd(), root.path());
  StateStore store(dir);
  StatusFile status(store);
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 200; ++i)
      status.publish("round " + std::to_string(round) + " text " + std::to_string(i) + "\n");
    status.flush();
    EXPECT_EQ(TempDir::read(root.longrun("status.md")),
              "round " + std::to_string(round) + " text 199\n");
  }
}

TEST(StatusFile, AStopWritesTheLastTextPublished) {
  TempDir root;
  LongrunDir dir(root.fd(), root.path());
  StateStore store(dir);
  {
    StatusFile status(store);
    status.publish("first\n");
    status.flush();
    status.publish("second\n");  // inside the gathering after the first write
    status.publish("last\n");
  }
  EXPECT_EQ(TempDir::read(root.longrun("status.md")), "last\n");
}

}  // namespace
}  // namespace leasefs::service

// status.md's writer: whatever it gathers, a flush finds the newest text in the
// file, and a stop writes it.
#include "state/status_file.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

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

// Without a flush or a stop: the writer is woken for a change that finds it
// idle, and one made while it gathers is written when the gathering ends.
TEST(StatusFile, EveryChangeReachesTheFileWithoutAFlush) {
  TempDir root;
  LongrunDir dir(root.fd(), root.path());
  StateStore store(dir);
  StatusFile status(store);
  auto eventually_reads = [&](const std::string& text) {
    // A bound for a hang, far above any gathering: not a measure of speed.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < give_up) {
      if (TempDir::read(root.longrun("status.md")) == text) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  };
  for (int i = 0; i < 5; ++i) {
    const std::string text = "change " + std::to_string(i) + "\n";
    status.publish(text);
    ASSERT_TRUE(eventually_reads(text)) << "status.md never got " << text;
  }
  status.publish("one\n");
  status.publish("two\n");  // while the first is written or gathered
  EXPECT_TRUE(eventually_reads("two\n"));
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

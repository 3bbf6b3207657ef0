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

namespace leasefs::state {
namespace {

using test::TempDir;

StatusFile::Render text(std::string t) {
  return [t = std::move(t)] { return t; };
}

TEST(StatusFile, AFlushInTheMiddleOfABurstFindsTheNewestText) {
  TempDir root;
  LongrunDir dir(root.fd(), root.path());
  StateStore store(dir);
  StatusFile status(store);
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 200; ++i)
      status.publish(text("round " + std::to_string(round) + " text " + std::to_string(i) + "\n"));
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
    const std::string change = "change " + std::to_string(i) + "\n";
    status.publish(text(change));
    ASSERT_TRUE(eventually_reads(change)) << "status.md never got " << change;
  }
  status.publish(text("one\n"));
  status.publish(text("two\n"));  // while the first is written or gathered
  EXPECT_TRUE(eventually_reads("two\n"));
}

TEST(StatusFile, AStopWritesTheLastTextPublished) {
  TempDir root;
  LongrunDir dir(root.fd(), root.path());
  StateStore store(dir);
  {
    StatusFile status(store);
    status.publish(text("first\n"));
    status.flush();
    status.publish(text("second\n"));  // inside the gathering after the first write
    status.publish(text("last\n"));
  }
  EXPECT_EQ(TempDir::read(root.longrun("status.md")), "last\n");
}

// The text is made by the writer, off the thread that publishes (a command
// under the service's lock); a text that cannot be made leaves the file as it
// was and the writer writing.
TEST(StatusFile, TheTextIsMadeOnTheWritersThreadAndAFailureToMakeItIsNotFatal) {
  TempDir root;
  LongrunDir dir(root.fd(), root.path());
  StateStore store(dir);
  StatusFile status(store);
  std::thread::id made_on;
  status.publish([&made_on] {
    made_on = std::this_thread::get_id();
    return std::string("made\n");
  });
  status.flush();
  EXPECT_EQ(TempDir::read(root.longrun("status.md")), "made\n");
  EXPECT_NE(made_on, std::thread::id());
  EXPECT_NE(made_on, std::this_thread::get_id());
  status.publish([]() -> std::string { throw std::runtime_error("cannot render"); });
  status.flush();
  EXPECT_EQ(TempDir::read(root.longrun("status.md")), "made\n");
  status.publish(text("after\n"));
  status.flush();
  EXPECT_EQ(TempDir::read(root.longrun("status.md")), "after\n");
}

}  // namespace
}  // namespace leasefs::state

#include "base/worker_thread.hpp"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

namespace leasefs::base {
namespace {

TEST(WorkerThread, RunsTheLoopOnAThreadOfItsName) {
  std::mutex mu;
  std::string name;
  WorkerThread worker(mu);
  worker.start("test-worker", [&] {
    char buf[16] = {};
    ::pthread_getname_np(::pthread_self(), buf, sizeof buf);
    std::lock_guard lock(mu);
    name = buf;
  });
  worker.stop();
  EXPECT_EQ(name, "test-worker");
}

TEST(WorkerThread, StopWakesALoopWaitingForNothing) {
  std::mutex mu;
  std::optional<bool> waited;
  WorkerThread worker(mu);
  worker.start("test-worker", [&] {
    std::unique_lock lock(mu);
    waited = worker.wait(lock, [] { return false; });
  });
  worker.stop();  // would never return if the wait were not woken
  ASSERT_TRUE(waited.has_value());
  EXPECT_FALSE(*waited);
}

TEST(WorkerThread, AWakeEndsAWaitWhoseConditionHolds) {
  std::mutex mu;
  bool ready = false;
  std::optional<bool> waited;
  std::condition_variable done;
  WorkerThread worker(mu);
  worker.start("test-worker", [&] {
    std::unique_lock lock(mu);
    waited = worker.wait(lock, [&] { return ready; });
    done.notify_all();
  });
  {
    std::unique_lock lock(mu);
    ready = true;
    worker.wake();
    done.wait(lock, [&] { return waited.has_value(); });
  }
  EXPECT_TRUE(*waited);  // woken by the wake, not by a stop
  worker.stop();
}

TEST(WorkerThread, ATimedWaitThatRunsOutIsNotAStop) {
  std::mutex mu;
  std::optional<bool> waited;
  WorkerThread worker(mu);
  worker.start("test-worker", [&] {
    std::unique_lock lock(mu);
    waited = worker.wait_for(lock, std::chrono::milliseconds(1));
  });
  worker.stop();
  ASSERT_TRUE(waited.has_value());
  // Either the millisecond ran out first (true) or the stop came first (false);
  // after the stop, a wait says so at once.
  std::unique_lock lock(mu);
  EXPECT_TRUE(worker.stopping());
  EXPECT_FALSE(worker.wait_for(lock, std::chrono::hours(1)));
}

TEST(WorkerThread, TheDestructorStopsAndJoins) {
  std::mutex mu;
  std::atomic<bool> returned{false};
  {
    WorkerThread worker(mu);
    worker.start("test-worker", [&] {
      std::unique_lock lock(mu);
      while (worker.wait(lock, [] { return false; })) {
      }
      returned = true;
    });
  }
  EXPECT_TRUE(returned.load());
}

TEST(WorkerThread, NothingStartsAfterAStop) {
  std::mutex mu;
  std::atomic<int> runs{0};
  WorkerThread worker(mu);
  worker.stop();
  worker.start("test-worker", [&] { ++runs; });
  worker.stop();
  EXPECT_EQ(runs.load(), 0);
}

TEST(WorkerThread, ASecondStartRunsNoSecondLoop) {
  std::mutex mu;
  std::atomic<int> runs{0};
  WorkerThread worker(mu);
  auto loop = [&] {
    ++runs;
    std::unique_lock lock(mu);
    worker.wait(lock, [] { return false; });
  };
  worker.start("test-worker", loop);
  worker.start("test-worker", loop);
  worker.stop();
  EXPECT_EQ(runs.load(), 1);
}

}  // namespace
}  // namespace leasefs::base

// The journal's listener (the audit chain's events): told of each entry once
// it is written, outside the journal's lock, in the order entries were made.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.hpp"
#include "base/would_block.hpp"
#include "journal/journal.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::test {
namespace {

class JournalListener : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir(dir.file(".longrun").c_str(), 0700), 0);
    longrun.reset(::open(dir.file(".longrun").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(longrun);
    journal = std::make_unique<journal::Journal>(dir.fd(), longrun.get());
  }

  TempDir dir;
  base::UniqueFd longrun;
  std::unique_ptr<journal::Journal> journal;
};

TEST_F(JournalListener, RunsWithoutTheJournalsLock) {
  int heard = 0;
  bool blocked = false;
  journal->set_listener([&](const journal::Entry&) {
    ++heard;
    base::NonBlockingScope scope;  // summary() throws WouldBlock while the lock is held
    try {
      (void)journal->summary(1);
    } catch (const base::WouldBlock&) {
      blocked = true;
    }
  });
  ASSERT_EQ(journal->before(1, "a.txt"), 0);
  EXPECT_EQ(heard, 1);
  EXPECT_FALSE(blocked);
}

TEST_F(JournalListener, EventsKeepTheOrderEntriesWereMade) {
  std::mutex mu;
  std::vector<uint64_t> seqs;
  journal->set_listener([&](const journal::Entry& e) {
    std::lock_guard lock(mu);
    seqs.push_back(e.seq);
  });
  constexpr int kThreads = 4, kEach = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        EXPECT_EQ(journal->before(1, "f" + std::to_string(t) + "_" + std::to_string(i)), 0);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_EQ(seqs.size(), size_t{kThreads * kEach});
  for (size_t i = 1; i < seqs.size(); ++i) ASSERT_LT(seqs[i - 1], seqs[i]) << "event " << i;
}

}  // namespace
}  // namespace leasefs::test

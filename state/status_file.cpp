#include "state/status_file.hpp"

#include <spdlog/spdlog.h>

#include "base/thread_name.hpp"

namespace leasefs::service {

StatusFile::StatusFile(const StateStore& store) : store_(store) {
  writer_ = std::thread([this] {
    base::name_this_thread("status-md");
    write_loop();
  });
}

StatusFile::~StatusFile() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_.notify_one();
  hurry_.notify_one();
  writer_.join();
}

void StatusFile::publish(std::string text) {
  {
    std::lock_guard lock(mu_);
    text_ = std::move(text);
    ++published_;
  }
  work_.notify_one();
}

void StatusFile::flush() {
  std::unique_lock lock(mu_);
  const uint64_t want = published_;
  ++flushers_;
  hurry_.notify_one();
  written_.wait(lock, [&] { return done_ >= want; });
  --flushers_;
}

void StatusFile::write_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || published_ > done_; });
    if (published_ == done_) return;  // stopping, and nothing left to write
    hurry_.wait_until(lock, next_write_, [&] { return stop_ || flushers_ > 0; });
    const uint64_t version = published_;
    const std::string text = text_;
    lock.unlock();
    try {
      store_.write_file("status.md", text, false);
    } catch (const std::exception& e) {
      spdlog::warn("cannot update status.md: {}", e.what());
    }
    lock.lock();
    next_write_ = std::chrono::steady_clock::now() + kGather;
    done_ = version;
    written_.notify_all();
  }
}

}  // namespace leasefs::service

#include "state/status_file.hpp"

#include <spdlog/spdlog.h>

namespace leasefs::state {

StatusFile::StatusFile(const StateStore& store) : store_(store) {
  writer_.start("status-md", [this] { write_loop(); });
}

StatusFile::~StatusFile() {
  writer_.stop();
}

void StatusFile::publish(Render render) {
  bool idle;
  {
    std::lock_guard lock(mu_);
    // A writer with a text still to write takes the newest when its gathering
    // ends: only an idle one needs waking.
    idle = published_ == done_;
    render_ = std::move(render);
    ++published_;
  }
  if (idle) writer_.wake();
}

void StatusFile::flush() {
  std::unique_lock lock(mu_);
  const uint64_t want = published_;
  ++flushers_;
  writer_.wake();
  written_.wait(lock, [&] { return done_ >= want; });
  --flushers_;
}

void StatusFile::write_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    writer_.wait(lock, [&] { return published_ > done_; });
    if (published_ == done_) return;  // stopping, and nothing left to write
    writer_.wait_until(lock, next_write_, [&] { return flushers_ > 0; });
    const uint64_t version = published_;
    const Render render = std::move(render_);  // each version is written once
    lock.unlock();
    try {
      store_.write_file("status.md", render(), false);
    } catch (const std::exception& e) {
      spdlog::warn("cannot update status.md: {}", e.what());
    }
    lock.lock();
    next_write_ = std::chrono::steady_clock::now() + kGather;
    done_ = version;
    written_.notify_all();
  }
}

}  // namespace leasefs::state

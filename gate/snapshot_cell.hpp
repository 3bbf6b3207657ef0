// A published, immutable value that many threads read without locks while a rare
// writer replaces it.
//
// Readers announce themselves on one of two counters (chosen by the parity of an
// epoch), load the pointer, and leave. A writer swaps the pointer, then flips the
// epoch twice, each time waiting for the counter of the old parity to drain: after
// the second wait no reader can still hold the old value, so it is deleted. Two
// counters keep a steady stream of new readers from starving the writer, because
// new readers land on the other counter. Readers never wait; writers are
// serialized. When publish() returns, every read that starts sees the new value.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace leasefs::gate {

template <class T>
class SnapshotCell {
 public:
  explicit SnapshotCell(std::unique_ptr<const T> initial) : current_(initial.release()) {}
  ~SnapshotCell() { delete current_.load(); }
  SnapshotCell(const SnapshotCell&) = delete;
  SnapshotCell& operator=(const SnapshotCell&) = delete;

  class ReadGuard {
   public:
    ReadGuard(const T* value, std::atomic<int64_t>* counter) noexcept
        : value_(value), counter_(counter) {}
    ReadGuard(ReadGuard&& other) noexcept
        : value_(other.value_), counter_(std::exchange(other.counter_, nullptr)) {}
    ReadGuard(const ReadGuard&) = delete;
    ReadGuard& operator=(const ReadGuard&) = delete;
    ReadGuard& operator=(ReadGuard&&) = delete;
    ~ReadGuard() {
      if (counter_) counter_->fetch_sub(1);
    }
    const T& operator*() const noexcept { return *value_; }
    const T* operator->() const noexcept { return value_; }

   private:
    const T* value_;
    std::atomic<int64_t>* counter_;
  };

  ReadGuard read() const noexcept {
    auto& counter = readers_[epoch_.load() & 1].n;
    counter.fetch_add(1);
    return ReadGuard(current_.load(), &counter);
  }

  void publish(std::unique_ptr<const T> next) {
    std::lock_guard lock(write_mu_);
    const T* old = current_.exchange(next.release());
    for (int flip = 0; flip < 2; ++flip) {
      uint64_t e = epoch_.fetch_add(1);
      while (readers_[e & 1].n.load() != 0) std::this_thread::yield();
    }
    delete old;
  }

 private:
  struct alignas(64) Counter {
    std::atomic<int64_t> n{0};
  };
  std::atomic<const T*> current_;
  mutable std::array<Counter, 2> readers_{};
  std::atomic<uint64_t> epoch_{0};
  std::mutex write_mu_;  // serializes writers; readers never take it
};

}  // namespace leasefs::gate

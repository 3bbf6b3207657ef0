// One named thread running an owner's loop, with the stop flag the loop waits
// on. The flag is guarded by the owner's mutex, the one that guards what the
// loop waits for, so that a change and its wake-up cannot cross. stop() sets
// the flag, wakes the loop and joins; the destructor stops. A wait returns false
// once stop() was called: the loop then drains what it must, or returns.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "base/thread_name.hpp"

namespace leasefs::base {

class WorkerThread {
 public:
  explicit WorkerThread(std::mutex& mu) : mu_(mu) {}
  ~WorkerThread() { stop(); }
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;

  // Runs `loop` on a new thread named `name`, unless one was started already
  // or stop() was called. Takes the owner's mutex: call it without.
  void start(std::string name, std::function<void()> loop) {
    std::lock_guard lock(mu_);
    if (stop_ || thread_.joinable()) return;
    thread_ = std::thread([name = std::move(name), loop = std::move(loop)] {
      name_this_thread(name);
      loop();
    });
  }

  // Sets the stop flag, wakes the loop and waits for it to return; idempotent.
  // Call it without the owner's mutex, and not from the loop.
  void stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // The loop has something new to look at (call it after changing what the
  // loop waits for, under the owner's mutex or after it).
  void wake() { cv_.notify_one(); }

  // The rest with the owner's mutex held.
  bool stopping() const { return stop_; }
  // start() made the thread: an owner that starts lazily skips start() then.
  bool started() const { return thread_.joinable(); }

  // Until `ready()` or stop(); false when stopping.
  template <class Ready>
  bool wait(std::unique_lock<std::mutex>& lock, Ready ready) {
    cv_.wait(lock, [&] { return stop_ || ready(); });
    return !stop_;
  }
  // Until `ready()`, stop() or `deadline`; false when stopping.
  template <class Clock, class Duration, class Ready>
  bool wait_until(std::unique_lock<std::mutex>& lock,
                  std::chrono::time_point<Clock, Duration> deadline, Ready ready) {
    cv_.wait_until(lock, deadline, [&] { return stop_ || ready(); });
    return !stop_;
  }
  // Until `ready()`, stop() or `timeout` passed; false when stopping.
  template <class Rep, class Period, class Ready>
  bool wait_for(std::unique_lock<std::mutex>& lock, std::chrono::duration<Rep, Period> timeout,
                Ready ready) {
    cv_.wait_for(lock, timeout, [&] { return stop_ || ready(); });
    return !stop_;
  }
  // Until stop() or `timeout` passed; false when stopping.
  template <class Rep, class Period>
  bool wait_for(std::unique_lock<std::mutex>& lock, std::chrono::duration<Rep, Period> timeout) {
    return wait_for(lock, timeout, [] { return false; });
  }

 private:
  std::mutex& mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace leasefs::base

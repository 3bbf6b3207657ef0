// Events of the control plane (turns, grants, refusals, ...) fanned out to every
// subscriber: `watch` connections and the audit writer. Publishing never blocks on
// a slow subscriber: each has a bounded queue that drops its oldest events and
// says how many it dropped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/json_text.hpp"

namespace leasefs::report {

class EventQueue {
 public:
  // A lossless queue (the audit's) never drops: push() waits for room instead.
  explicit EventQueue(size_t capacity, bool lossless = false)
      : capacity_(capacity), lossless_(lossless) {}

  // Next event, or nullopt after `timeout` or once closed and drained.
  std::optional<base::JsonText> pop(std::chrono::milliseconds timeout);
  void push(base::JsonText event);
  void close();
  bool closed() const;
  // Called (under the queue's lock, so it must not block or call back) after each
  // event pushed: lets an event loop wait for events and sockets in one place.
  void set_wake(std::function<void()> wake);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable space_cv_;
  std::deque<base::JsonText> events_;
  size_t capacity_;
  bool lossless_ = false;
  uint64_t dropped_ = 0;
  bool closed_ = false;
  std::function<void()> wake_;
};

class EventBus {
 public:
  // Every event gets "ts_ms" if missing and a growing "seq", and is serialized
  // once for every subscriber: the value's tree stays with the publisher, and
  // each queue holds one string (no copy of the tree per subscriber, none freed
  // on another thread's heap).
  void publish(nlohmann::json event);
  // The same for an event written member by member (base::ObjectText).
  void publish(base::ObjectText event);
  std::shared_ptr<EventQueue> subscribe(size_t capacity = 1024);
  // A subscriber that must see every event (the audit): publishing waits while
  // its queue is full.
  std::shared_ptr<EventQueue> subscribe_lossless(size_t capacity);
  void unsubscribe(const std::shared_ptr<EventQueue>& queue);
  void close_all();

 private:
  // With mu_ held: `text` to every subscriber.
  void fan_out_locked(base::JsonText text);

  std::mutex mu_;
  uint64_t seq_ = 0;
  std::vector<std::shared_ptr<EventQueue>> queues_;
};

}  // namespace leasefs::report

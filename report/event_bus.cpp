#include "report/event_bus.hpp"

#include <algorithm>

#include "base/clock.hpp"

namespace leasefs::report {

std::optional<base::JsonText> EventQueue::pop(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !events_.empty() || closed_; });
  if (events_.empty()) return std::nullopt;
  base::JsonText event = std::move(events_.front());
  events_.pop_front();
  if (lossless_) space_cv_.notify_one();
  if (dropped_ > 0) {
    // Only a lossy queue that overflowed: the event is read back to say so.
    nlohmann::json value = event.value();
    value["dropped_before"] = dropped_;
    dropped_ = 0;
    return base::JsonText(value);
  }
  return event;
}

void EventQueue::push(base::JsonText event) {
  {
    std::unique_lock lock(mu_);
    if (lossless_) space_cv_.wait(lock, [&] { return closed_ || events_.size() < capacity_; });
    if (closed_) return;
    if (events_.size() >= capacity_) {
      events_.pop_front();
      ++dropped_;
    }
    events_.push_back(std::move(event));
    if (wake_) wake_();
  }
  cv_.notify_one();
}

void EventQueue::set_wake(std::function<void()> wake) {
  std::lock_guard lock(mu_);
  wake_ = std::move(wake);
}

void EventQueue::close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  space_cv_.notify_all();
}

bool EventQueue::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

void EventBus::publish(nlohmann::json event) {
  if (!event.contains("ts_ms")) event["ts_ms"] = base::now_ms();
  std::lock_guard lock(mu_);
  event["seq"] = ++seq_;
  if (queues_.empty()) return;
  fan_out_locked(base::JsonText(event));
}

void EventBus::publish(base::ObjectText event) {
  if (!event.contains("ts_ms")) event.set("ts_ms", base::now_ms());
  std::lock_guard lock(mu_);
  event.set("seq", ++seq_);
  if (queues_.empty()) return;
  fan_out_locked(base::JsonText(event));
}

void EventBus::fan_out_locked(base::JsonText text) {
  for (size_t i = 0; i + 1 < queues_.size(); ++i) queues_[i]->push(text);
  queues_.back()->push(std::move(text));
}

std::shared_ptr<EventQueue> EventBus::subscribe(size_t capacity) {
  auto q = std::make_shared<EventQueue>(capacity);
  std::lock_guard lock(mu_);
  queues_.push_back(q);
  return q;
}

std::shared_ptr<EventQueue> EventBus::subscribe_lossless(size_t capacity) {
  auto q = std::make_shared<EventQueue>(capacity, true);
  std::lock_guard lock(mu_);
  queues_.push_back(q);
  return q;
}

void EventBus::unsubscribe(const std::shared_ptr<EventQueue>& queue) {
  queue->close();
  std::lock_guard lock(mu_);
  std::erase(queues_, queue);
}

void EventBus::close_all() {
  std::lock_guard lock(mu_);
  for (auto& q : queues_) q->close();
  queues_.clear();
}

}  // namespace leasefs::report

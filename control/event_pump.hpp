// The control plane's end of the gate's reports. Filesystem threads call
// on_refusal/on_write_closed; those only queue (bounded, dropping the newest when
// full and counting what was dropped) and return. One worker thread turns each
// report into an event on the bus, hashes files closed after a leased write, and
// tells the service about refusals (for status and status.md).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <variant>

#include "gate/gate.hpp"
#include "service/event_bus.hpp"

namespace leasefs::gate {
class Service;
}

namespace leasefs::gate::control {

inline constexpr uint64_t kDefaultHashLimitBytes = uint64_t{64} << 20;

class GateEventPump final : public GateEventSink {
 public:
  // `service` may be null (events only).
  GateEventPump(Service* service, EventBus& events,
                uint64_t hash_limit_bytes = kDefaultHashLimitBytes, size_t capacity = 4096);
  ~GateEventPump() override;
  GateEventPump(const GateEventPump&) = delete;
  GateEventPump& operator=(const GateEventPump&) = delete;

  void on_refusal(Refusal refusal) noexcept override;
  void on_write_closed(WriteClosed closed) noexcept override;

  void start();
  // Publishes what is queued, then joins the worker; idempotent.
  void stop();

  static nlohmann::json refusal_event(const Refusal& refusal);
  // Hashes `closed.content` unless it is larger than `hash_limit_bytes`.
  static nlohmann::json write_closed_event(const WriteClosed& closed, uint64_t hash_limit_bytes);

 private:
  using Item = std::variant<Refusal, WriteClosed>;
  void push(Item item) noexcept;
  void run();

  Service* service_;
  EventBus& events_;
  uint64_t hash_limit_;
  size_t capacity_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> items_;
  uint64_t dropped_ = 0;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace leasefs::gate::control

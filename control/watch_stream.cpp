#include "control/watch_stream.hpp"

namespace leasefs::control {

WatchStream::WatchStream(report::EventBus& bus, std::function<void()> wake)
    : bus_(bus), queue_(bus.subscribe()) {
  queue_->set_wake(std::move(wake));
}

WatchStream::~WatchStream() {
  // After this the bus pushes nothing more, so `wake` is never called again.
  bus_.unsubscribe(queue_);
}

std::optional<std::string> WatchStream::next_line() {
  auto event = queue_->pop(std::chrono::milliseconds(0));
  if (!event) return std::nullopt;
  return event->str() + '\n';  // protocol::to_line of the value: both use base::json_text
}

bool WatchStream::ended() const {
  return queue_->closed();
}

}  // namespace leasefs::control

// A `watch` stream: the control plane's events, one per line, for as long as the
// peer stays. It is a connection in another mode, served by the same event loop:
// the subscription wakes the loop when an event arrives (as a watchman
// subscription pings its client), and the loop writes events while the peer
// takes them. A peer that reads slowly costs its bounded queue (the oldest
// events are dropped and counted) and nothing else: no thread waits on it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "report/event_bus.hpp"

namespace leasefs::control {

class WatchStream {
 public:
  // Subscribes now, so that every event after the caller's ack is seen; `wake`
  // is called from the publishing thread after each event.
  WatchStream(report::EventBus& bus, std::function<void()> wake);
  ~WatchStream();
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;

  // The next event as a line, if one is waiting.
  std::optional<std::string> next_line();
  // The bus closed the subscription and every event was taken.
  bool ended() const;

 private:
  report::EventBus& bus_;
  std::shared_ptr<report::EventQueue> queue_;
};

}  // namespace leasefs::control

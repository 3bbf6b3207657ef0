// The control plane's end of ask mode (gate/ask.hpp). Filesystem threads raise
// asks and report the ones they stopped waiting for; those only queue and return.
// One thread hands them to the service, which records the request in the ledger
// (a SQLite write no filesystem thread should wait for) or closes it.
#pragma once

#include <deque>
#include <mutex>
#include <variant>

#include "base/worker_thread.hpp"
#include "gate/ask.hpp"

namespace leasefs::service {
class Service;
}  // namespace leasefs::service

namespace leasefs::control {

class AskDesk final : public gate::AskDesk {
 public:
  explicit AskDesk(service::Service& service) : service_(service) {}
  AskDesk(const AskDesk&) = delete;
  AskDesk& operator=(const AskDesk&) = delete;

  void on_ask(gate::Ask ask) noexcept override;
  void on_ask_ended(uint64_t id, gate::AskEnd end) noexcept override;

  void start();
  // Hands over what is queued, then joins the thread; idempotent.
  void stop();

 private:
  struct Ended {
    uint64_t id;
    gate::AskEnd end;
  };
  void run();

  service::Service& service_;
  std::mutex mu_;
  // Bounded by the filesystem's bound on parked requests: each raises one ask
  // and ends at most once.
  std::deque<std::variant<gate::Ask, Ended>> queue_;
  base::WorkerThread worker_{mu_};  // last: stopped before the rest goes
};

}  // namespace leasefs::control

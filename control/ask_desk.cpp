#include "control/ask_desk.hpp"

#include <spdlog/spdlog.h>

#include "service/service.hpp"

namespace leasefs::control {

void AskDesk::on_ask(gate::Ask ask) noexcept {
  try {
    std::lock_guard lock(mu_);
    queue_.emplace_back(std::move(ask));
  } catch (...) {
    return;  // out of memory: the ask is never put to a person and times out
  }
  worker_.wake();
}

void AskDesk::on_ask_ended(uint64_t id, gate::AskEnd end) noexcept {
  try {
    std::lock_guard lock(mu_);
    queue_.emplace_back(Ended{id, end});
  } catch (...) {
    return;  // its request stays pending until the turn ends
  }
  worker_.wake();
}

void AskDesk::start() {
  worker_.start("ask-desk", [this] { run(); });
}

void AskDesk::stop() {
  worker_.stop();
}

void AskDesk::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    worker_.wait(lock, [&] { return !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything handed over
    auto item = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    try {
      if (auto* ask = std::get_if<gate::Ask>(&item)) {
        service_.open_ask(*ask);
      } else {
        const auto& ended = std::get<Ended>(item);
        service_.close_ask(ended.id, ended.end);
      }
    } catch (const std::exception& e) {
      spdlog::warn("ask mode: {}", e.what());
    }
    lock.lock();
  }
}

}  // namespace leasefs::control

#include "control/ask_desk.hpp"

#include <spdlog/spdlog.h>

#include "base/thread_name.hpp"
#include "service/service.hpp"

namespace leasefs::control {

AskDesk::~AskDesk() {
  stop();
}

void AskDesk::on_ask(gate::Ask ask) noexcept {
  try {
    std::lock_guard lock(mu_);
    queue_.emplace_back(std::move(ask));
  } catch (...) {
    return;  // out of memory: the ask is never put to a person and times out
  }
  cv_.notify_one();
}

void AskDesk::on_ask_ended(uint64_t id, gate::AskEnd end) noexcept {
  try {
    std::lock_guard lock(mu_);
    queue_.emplace_back(Ended{id, end});
  } catch (...) {
    return;  // its request stays pending until the turn ends
  }
  cv_.notify_one();
}

void AskDesk::start() {
  std::lock_guard lock(mu_);
  if (!worker_.joinable() && !stopping_) {
    worker_ = std::thread([this] {
      base::name_this_thread("ask-desk");
      run();
    });
  }
}

void AskDesk::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void AskDesk::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
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

#include "control/event_pump.hpp"

#include <errno.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

#include "base/sha256.hpp"
#include "service/service.hpp"

namespace leasefs::gate::control {

using nlohmann::json;

GateEventPump::GateEventPump(Service* service, EventBus& events, uint64_t hash_limit_bytes,
                             size_t capacity)
    : service_(service), events_(events), hash_limit_(hash_limit_bytes), capacity_(capacity) {}

GateEventPump::~GateEventPump() {
  stop();
}

void GateEventPump::on_refusal(Refusal refusal) noexcept {
  push(Item(std::move(refusal)));
}

void GateEventPump::on_write_closed(WriteClosed closed) noexcept {
  push(Item(std::move(closed)));
}

void GateEventPump::push(Item item) noexcept {
  try {
    {
      std::lock_guard lock(mu_);
      if (stopping_ || items_.size() >= capacity_) {
        ++dropped_;
        return;
      }
      items_.push_back(std::move(item));
    }
    cv_.notify_one();
  } catch (...) {
    // Out of memory: the report is lost, the filesystem thread is not.
  }
}

void GateEventPump::start() {
  std::lock_guard lock(mu_);
  if (worker_.joinable() || stopping_) return;
  worker_ = std::thread([this] { run(); });
}

void GateEventPump::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void GateEventPump::run() {
  while (true) {
    Item item;
    uint64_t dropped = 0;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !items_.empty(); });
      if (items_.empty()) return;  // stopping and drained
      item = std::move(items_.front());
      items_.pop_front();
      dropped = std::exchange(dropped_, 0);
    }
    try {
      if (dropped > 0) {
        spdlog::warn("control: {} gate reports dropped (queue full)", dropped);
        events_.publish({{"type", "reports_dropped"}, {"count", dropped}});
      }
      if (auto* r = std::get_if<Refusal>(&item)) {
        json event = refusal_event(*r);
        spdlog::info("refused {} {} (pid {} {}): {}", event["op"].get<std::string>(), r->path,
                     r->caller.pid, r->process, event["reason"].get<std::string>());
        if (service_) service_->note_refusal(event);
        events_.publish(std::move(event));
      } else {
        auto& closed = std::get<WriteClosed>(item);
        events_.publish(write_closed_event(closed, hash_limit_));
      }
    } catch (const std::exception& e) {
      spdlog::error("control: could not publish a gate report: {}", e.what());
    }
  }
}

json GateEventPump::refusal_event(const Refusal& r) {
  json event = {{"type", "refusal"},
                {"op", std::string(op_name(r.op))},
                {"path", r.path},
                {"pid", r.caller.pid},
                {"uid", r.caller.uid},
                {"process", r.process},
                {"reason", std::string(to_string(r.reason))},
                {"count", r.count}};
  if (r.at_ms > 0) event["ts_ms"] = r.at_ms;
  return event;
}

json GateEventPump::write_closed_event(const WriteClosed& c, uint64_t hash_limit_bytes) {
  json event = {{"type", "write_closed"}, {"path", c.path},      {"bytes", c.bytes_written},
                {"grant_id", c.grant_id}, {"pid", c.caller.pid}, {"uid", c.caller.uid}};
  if (!c.content) {
    event["sha256_skipped"] = "no_content";
    return event;
  }
  struct stat st {};
  if (::fstat(c.content.get(), &st) != 0) {
    event["sha256_skipped"] = "stat_failed";
    return event;
  }
  event["size"] = static_cast<uint64_t>(st.st_size);
  if (static_cast<uint64_t>(st.st_size) > hash_limit_bytes) {
    event["sha256_skipped"] = "size";
    return event;
  }
  std::string digest = base::sha256_hex_fd(c.content.get());
  if (digest.empty()) {
    event["sha256_skipped"] = "read_failed";
  } else {
    event["sha256"] = std::move(digest);
  }
  return event;
}

}  // namespace leasefs::gate::control

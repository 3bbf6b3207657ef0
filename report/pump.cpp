#include "report/pump.hpp"

#include <errno.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <memory>

#include "base/sha256.hpp"

namespace leasefs::report {

using nlohmann::json;

namespace {

std::string refusal_key(const Refusal& r) {
  return std::to_string(r.turn) + '/' + std::to_string(r.caller.uid) + '/' +
         std::to_string(r.caller.pid) + '/' + r.process + '/' + std::string(gate::op_name(r.op)) +
         '/' + std::string(to_string(r.reason)) + '/' + r.path;
}

void append_number(std::string& out, uint64_t n) {
  char digits[20];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, end);
}

// Built in one buffer: this runs on the filesystem's thread for every allowed
// mutation. Lengths first: a path holding '/' or '>' cannot make two keys collide.
std::string allowed_key(const Allowed& a) {
  const std::string_view op = gate::op_name(a.op);
  std::string key;
  key.reserve(48 + op.size() + a.grant_id.size() + a.path.size() + a.target.size());
  append_number(key, a.caller.uid);
  key += '/';
  append_number(key, static_cast<uint64_t>(a.caller.pid));
  key += '/';
  key += op;
  key += '/';
  key += a.grant_id;
  key += '/';
  append_number(key, a.path.size());
  key += ':';
  key += a.path;
  key += '>';
  key += a.target;
  return key;
}

std::string overflow_key(const Refusal& r) {
  return std::to_string(r.caller.uid) + '/' + std::string(gate::op_name(r.op)) + '/' +
         std::string(to_string(r.reason));
}

}  // namespace

Pump::Pump(Bookkeeping bookkeeping, EventBus& events, uint64_t hash_limit_bytes, size_t capacity)
    : bookkeeping_(std::move(bookkeeping)),
      events_(events),
      hash_limit_(hash_limit_bytes),
      capacity_(capacity) {}

Pump::~Pump() {
  stop();
}

void Pump::on_refusal(Refusal refusal) noexcept {
  try {
    bool wake = false;
    {
      std::lock_guard lock(mu_);
      if (stopped_) {
        ++dropped_refusals_;
        return;
      }
      const bool idle = refusals_.empty() && overflow_.empty();
      std::map<std::string, Refusal>* into = &refusals_;
      std::string key = refusal_key(refusal);
      if (refusals_.size() >= kMaxRefusalKeys && !refusals_.contains(key)) {
        into = &overflow_;
        key = overflow_key(refusal);
        refusal.path = "*";
        refusal.process = "*";
        refusal.caller.pid = 0;
      }
      auto [it, inserted] = into->try_emplace(std::move(key), std::move(refusal));
      if (!inserted) it->second.count += refusal.count;
      // The first refusal counted since the last publication wakes the worker: it
      // publishes at once after a quiet interval, else when the interval ends.
      wake = idle;
    }
    if (wake) worker_.wake();
  } catch (...) {
    // Out of memory: the filesystem thread goes on.
  }
}

void Pump::on_write_closed(WriteClosed closed) noexcept {
  try {
    {
      std::unique_lock lock(mu_);
      cv_space_.wait(lock, [&] { return stopped_ || closed_.size() < capacity_; });
      if (stopped_) {
        ++dropped_closed_;
        spdlog::error("report: a file closed after a leased write ({}) came after the stop",
                      closed.path);
        return;
      }
      closed_.push_back(std::move(closed));
    }
    worker_.wake();
  } catch (...) {
    // Out of memory: the report is lost, the filesystem thread is not.
  }
}

void Pump::on_allowed(Allowed allowed) noexcept {
  try {
    bool wake = false;
    {
      std::unique_lock lock(mu_);
      std::string key = allowed_key(allowed);
      // Room for a new key, else wait for the worker to publish the batch: an
      // allowed mutation is never dropped nor folded into another.
      cv_space_.wait(lock, [&] {
        return stopped_ || allowed_.size() < kMaxAllowedKeys || allowed_at_.contains(key);
      });
      if (stopped_) {
        ++dropped_allowed_;
        return;
      }
      wake = allowed_.empty() && refusals_.empty() && overflow_.empty();
      auto [it, inserted] = allowed_at_.try_emplace(std::move(key), allowed_.size());
      if (inserted) {
        allowed_.push_back(std::move(allowed));
      } else {
        allowed_[it->second].count += 1;
      }
      if (allowed_.size() >= kMaxAllowedKeys) wake = true;
    }
    if (wake) worker_.wake();
  } catch (...) {
    // Out of memory: the filesystem thread goes on.
  }
}

void Pump::start() {
  worker_.start("gate-events", [this] { run(); });
  bookkeeper_.start("refusal-books", [this] { keep_books(); });
}

void Pump::stop() {
  worker_.stop();
  {
    std::lock_guard lock(mu_);
    stopped_ = true;  // also when never started: nothing waits for room any more
  }
  cv_space_.notify_all();
  bookkeeper_.stop();
  noted_idle_.notify_all();  // a flush_refusals() still waiting sees the stop
}

std::vector<Refusal> Pump::take_refusals() {
  std::vector<Refusal> out;
  out.reserve(refusals_.size() + overflow_.size());
  for (auto& [key, r] : refusals_) out.push_back(std::move(r));
  for (auto& [key, r] : overflow_) out.push_back(std::move(r));
  refusals_.clear();
  overflow_.clear();
  return out;
}

void Pump::run() {
  std::unique_lock lock(mu_);
  while (true) {
    auto counted = [&] { return !refusals_.empty() || !overflow_.empty() || !allowed_.empty(); };
    auto due = [&] {
      return counted() && (worker_.stopping() || allowed_.size() >= kMaxAllowedKeys ||
                           std::chrono::steady_clock::now() >= next_flush_);
    };
    bool woke = false;
    while (closed_.empty() && !due() && !worker_.stopping()) {
      if (counted()) {
        worker_.wait_until(lock, next_flush_, [&] { return !closed_.empty() || due(); });
      } else {
        worker_.wait(lock, [&] { return !closed_.empty() || counted(); });
      }
      woke = true;
    }
    if (!closed_.empty()) {
      if (woke && !worker_.stopping()) {
        // Woken from idle by a close: let the files closed right after it (an
        // untar, a checkout) queue up, and hash them in one pass rather than
        // waking for each.
        lock.unlock();
        std::this_thread::sleep_for(kCloseGather);
        lock.lock();
        continue;
      }
      WriteClosed closed = std::move(closed_.front());
      closed_.pop_front();
      lock.unlock();
      // All: writers of closed files and of allowed records wait on the same
      // condition, and one woken for the wrong room would leave the other asleep.
      cv_space_.notify_all();
      try {
        events_.publish(write_closed_event(closed, hash_limit_));
      } catch (const std::exception& e) {
        spdlog::error("report: could not publish a closed file {}: {}", closed.path, e.what());
      }
      lock.lock();
      continue;
    }
    if (due()) {
      std::vector<Allowed> allowed = std::exchange(allowed_, {});
      allowed_at_.clear();
      std::vector<Refusal> batch = take_refusals();
      next_flush_ = std::chrono::steady_clock::now() + kRefusalInterval;
      lock.unlock();
      cv_space_.notify_all();
      for (const Allowed& a : allowed) {
        try {
          events_.publish(allowed_event(a));
        } catch (const std::exception& e) {
          spdlog::error("report: could not publish an allowed {} of {}: {}", gate::op_name(a.op),
                        a.path, e.what());
        }
      }
      publish_refusals(std::move(batch));
      lock.lock();
      continue;
    }
    // Stopping, and nothing is left.
    const uint64_t closed_lost = std::exchange(dropped_closed_, 0);
    const uint64_t refusals_lost = std::exchange(dropped_refusals_, 0);
    const uint64_t allowed_lost = std::exchange(dropped_allowed_, 0);
    if (closed_lost + refusals_lost + allowed_lost > 0) {
      lock.unlock();
      events_.publish({{"type", "reports_dropped"},
                       {"count", closed_lost + refusals_lost + allowed_lost},
                       {"write_closed", closed_lost},
                       {"refusals", refusals_lost},
                       {"allowed", allowed_lost}});
      lock.lock();
    }
    return;
  }
}

void Pump::publish_refusals(std::vector<Refusal> refusals) {
  try {
    std::vector<json> events;
    events.reserve(refusals.size());
    uint64_t total = 0;
    for (const Refusal& r : refusals) {
      events.push_back(refusal_event(r));
      total += r.count;
    }
    if (events.size() <= 8) {
      for (const Refusal& r : refusals) {
        spdlog::info("refused {} {} (pid {} {}): {}{}", gate::op_name(r.op), r.path, r.caller.pid,
                     r.process, to_string(r.reason),
                     r.count > 1 ? " x" + std::to_string(r.count) : std::string());
      }
    } else {
      spdlog::info("refused {} operation(s) on {} (uid, pid, op, path) in the last interval", total,
                   events.size());
    }
    for (const json& event : events) events_.publish(event);
    if (!bookkeeping_) return;
    {
      std::lock_guard lock(noted_mu_);
      for (json& event : events) noted_.push_back(std::move(event));
      if (noted_.size() > kMaxNoted) {
        const auto fold = static_cast<std::ptrdiff_t>(noted_.size() - kMaxNoted);
        for (auto it = noted_.begin(); it != noted_.begin() + fold; ++it) {
          noted_extra_ += it->value("count", uint64_t{1});
        }
        noted_.erase(noted_.begin(), noted_.begin() + fold);
      }
    }
    bookkeeper_.wake();
  } catch (const std::exception& e) {
    spdlog::error("report: could not publish refusals: {}", e.what());
  }
}

void Pump::flush_refusals() {
  std::vector<Refusal> batch;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    batch = take_refusals();
  }
  cv_space_.notify_all();
  if (!batch.empty()) publish_refusals(std::move(batch));
  if (!bookkeeping_) return;
  // Bounded: under a refusal storm the bookkeeper is never idle, and `status`
  // (which the agent may call) must not wait for the storm to end.
  std::unique_lock lock(noted_mu_);
  noted_idle_.wait_for(lock, std::chrono::milliseconds(250), [&] {
    return bookkeeper_.stopping() || (noted_.empty() && noted_extra_ == 0 && !noting_);
  });
}

void Pump::keep_books() {
  std::unique_lock lock(noted_mu_);
  while (true) {
    bookkeeper_.wait(lock, [&] { return !noted_.empty() || noted_extra_ > 0; });
    if (noted_.empty() && noted_extra_ == 0) return;  // stopping, nothing left
    std::vector<json> batch = std::exchange(noted_, {});
    const uint64_t extra = std::exchange(noted_extra_, 0);
    noting_ = true;
    lock.unlock();
    try {
      bookkeeping_(batch, extra);
    } catch (const std::exception& e) {
      spdlog::error("report: could not note refusals: {}", e.what());
    }
    lock.lock();
    noting_ = false;
    noted_idle_.notify_all();
  }
}

json Pump::refusal_event(const Refusal& r) {
  json event = {{"type", "refusal"},
                {"op", std::string(gate::op_name(r.op))},
                {"path", r.path},
                {"pid", r.caller.pid},
                {"uid", r.caller.uid},
                {"process", r.process},
                {"reason", std::string(to_string(r.reason))},
                {"count", r.count},
                {"turn", r.turn}};
  if (r.at_ms > 0) event["ts_ms"] = r.at_ms;
  return event;
}

json Pump::allowed_event(const Allowed& a) {
  // Member by member, on every allowed mutation: an initializer list builds a
  // two-element array per member first.
  json event = json::object();
  event["type"] = "allowed";
  event["op"] = gate::op_name(a.op);
  event["path"] = a.path;
  event["uid"] = a.caller.uid;
  event["pid"] = a.caller.pid;
  event["grant_id"] = a.grant_id;
  event["count"] = a.count;
  if (!a.target.empty()) event["target"] = a.target;
  return event;
}

json Pump::write_closed_event(const WriteClosed& c, uint64_t hash_limit_bytes) {
  json event = json::object();  // member by member, as allowed_event
  event["type"] = "write_closed";
  event["path"] = c.path;
  event["bytes"] = c.bytes_written;
  event["grant_id"] = c.grant_id;
  event["pid"] = c.caller.pid;
  event["uid"] = c.caller.uid;
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

}  // namespace leasefs::report

#include "report/audit_writer.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.hpp"
#include "base/failpoint.hpp"
#include "base/thread_name.hpp"
#include "signing/head_verifier.hpp"

namespace leasefs::report {
namespace {

// Whether `batch` ends a turn (signing::ends_a_turn), and which one when its last
// such record says: `turn` names the turn it begins, so the one before it ended;
// `end-turn` and `resume` name their own. Only a text that names such a type is
// parsed (one in a thousand records or fewer).
struct TurnEnd {
  std::optional<uint64_t> turn;
};

std::optional<TurnEnd> turn_ended(const std::vector<base::JsonText>& batch) {
  std::optional<TurnEnd> out;
  for (const auto& text : batch) {
    const std::string& s = text.str();
    if (s.find("\"type\":\"turn\"") == std::string::npos &&
        s.find("\"type\":\"end-turn\"") == std::string::npos &&
        s.find("\"type\":\"resume\"") == std::string::npos &&
        s.find("\"type\":\"transition\"") == std::string::npos) {
      continue;
    }
    const nlohmann::json ev = nlohmann::json::parse(s, nullptr, false);
    if (!ev.is_object()) continue;
    auto text_of = [&](const char* key) {
      const auto it = ev.find(key);
      return it != ev.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string type = text_of("type");
    if (!signing::ends_a_turn(type, text_of("to"))) continue;
    TurnEnd end;
    if (const auto n = ev.find("turn"); n != ev.end() && n->is_number_unsigned()) {
      const uint64_t turn = n->get<uint64_t>();
      end.turn = type == "turn" && turn > 0 ? turn - 1 : turn;
    }
    out = end;
  }
  return out;
}

}  // namespace

AuditWriter::AuditWriter(EventBus& bus, memory::AuditLog& audit, base::DiskReserve& reserve)
    : audit_(audit), reserve_(reserve), queue_(bus.subscribe_lossless(kQueueCapacity)) {
  thread_ = std::thread([this] {
    base::name_this_thread("audit");
    run();
  });
}

AuditWriter::~AuditWriter() {
  stop();
}

// The reserve is spent already: the disk may get room back within moments (a
// file removed, the deleted-file sweep), so the batch waits a little for it
// before it counts as lost. Rethrows the last error when no room came.
std::vector<memory::AuditRecord> AuditWriter::append_once_there_is_room(
    const std::vector<base::JsonText>& batch, const std::exception& first) {
  spdlog::warn("audit: {}; the disk is full, waiting for room", first.what());
  for (int attempt = 1;; ++attempt) {
    std::this_thread::sleep_for(kFullDiskRetry);
    try {
      return audit_.append_batch(batch);
    } catch (const std::exception&) {
      if (attempt >= kFullDiskRetries) throw;
    }
  }
}

void AuditWriter::sign_if_turn_ended(const std::vector<base::JsonText>& batch,
                                     const std::vector<memory::AuditRecord>& records) {
  HeadSigner* signer = signer_.load();
  if (!signer || records.empty()) return;
  const std::optional<TurnEnd> end = turn_ended(batch);
  if (!end) return;
  const nlohmann::json record = signer->sign(records.back().seq, records.back().hash, end->turn);
  try {
    audit_.append(record);
  } catch (const std::exception& e) {
    spdlog::error("audit: could not record the signed head of size {}: {}", records.back().seq,
                  e.what());
  }
}

void AuditWriter::stop() {
  queue_->close();  // the thread drains the queue, then returns
  if (thread_.joinable()) thread_.join();
}

void AuditWriter::run() {
  std::vector<base::JsonText> batch;
  uint64_t lost = 0;
  nlohmann::json lost_types = nlohmann::json::object();
  std::string lost_why;
  bool lose_next = base::failpoint_armed("audit.lose_batch");
  using Clock = base::BatchPacing::Clock;
  Clock::time_point previous{};  // long ago: the first batch waits kPacing.gather only
  while (true) {
    auto event = queue_->pop(std::chrono::milliseconds(500));
    if (!event) {
      if (queue_->closed()) break;
      continue;
    }
    const Clock::time_point first = Clock::now();
    batch.clear();
    if (lost > 0) {
      batch.emplace_back(nlohmann::json{{"type", "audit_lost"},
                                        {"count", lost},
                                        {"types", lost_types},
                                        {"error", lost_why},
                                        {"ts_ms", base::now_ms()}});
    }
    batch.push_back(std::move(*event));
    auto take_queued = [&] {
      while (batch.size() < kMaxBatch) {
        auto more = queue_->pop(std::chrono::milliseconds(0));
        if (!more) break;
        batch.push_back(std::move(*more));
      }
    };
    take_queued();
    // A full batch goes at once: under a flood the wait would only slow the
    // writer (and publishers wait once the queue is full). Stopping goes at once.
    const Clock::time_point at = kPacing.due(first, previous);
    while (batch.size() < kMaxBatch && !queue_->closed()) {
      const Clock::time_point now = Clock::now();
      if (now >= at) break;
      std::this_thread::sleep_for(std::min<Clock::duration>(at - now, kPacing.gather));
      take_queued();
    }
    previous = Clock::now();
    try {
      if (std::exchange(lose_next, false)) {
        throw std::runtime_error("failpoint audit.lose_batch");
      }
      std::lock_guard hold(append_mu_);
      const size_t appended = audit_.count();
      std::vector<memory::AuditRecord> records;
      try {
        records = audit_.append_batch(batch);
      } catch (const std::exception& e) {
        // Perhaps the disk is full: its reserve is for this, so once more with
        // it, unless the batch reached the log (only its anchor failed).
        if (audit_.count() != appended) throw;
        if (!reserve_.full()) {
          spdlog::warn("audit: {}; the disk's reserve is given up and the batch retried", e.what());
          reserve_.no_space();
          records = audit_.append_batch(batch);
        } else {
          records = append_once_there_is_room(batch, e);
        }
      }
      sign_if_turn_ended(batch, records);
      lost = 0;
      lost_types = nlohmann::json::object();
      lost_why.clear();
    } catch (const std::exception& e) {
      spdlog::error("audit: could not append {} event(s): {}", batch.size(), e.what());
      for (const auto& text : batch) {
        const nlohmann::json ev = text.value();
        if (ev.value("type", std::string()) == "audit_lost") continue;  // counted already
        ++lost;
        const std::string type = ev.value("type", std::string("?"));
        lost_types[type] = lost_types.value(type, uint64_t{0}) + 1;
      }
      lost_why = e.what();
    }
  }
  if (lost > 0) {
    spdlog::error("audit: {} event(s) lost and not recorded in the chain: {}", lost,
                  lost_types.dump());
  }
}

}  // namespace leasefs::report

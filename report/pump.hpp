// The control plane's end of the filesystem's reports (report/reports.hpp).
// Filesystem threads call on_refusal/on_write_closed/on_allowed; those only queue
// and return. One worker thread turns each report into an event on the bus,
// hashes files closed after a leased write, and hands the refusals to the
// bookkeeping (the service's status and status.md). Refusals are counted here
// only: the bookkeeping adds up the counts it is handed.
//
// What was allowed is never dropped: files closed after a leased write wait in
// their own bounded queue, and a filesystem thread that finds it full waits for
// room (back-pressure on the writer, never a lost record). Refusals are coalesced
// instead: counted per (uid, pid, process, op, path, reason) and published once
// per interval with their counts; past kMaxRefusalKeys distinct keys in one
// interval, further ones are counted per (uid, op, reason) with path "*". Either
// way every refusal is in a count that reaches the audit, and the refusal
// bookkeeping (status.md) runs once per interval on a thread of its own, off the
// filesystem threads and the audit's way (it may wait for the service's lock).
// Mutations the gate allowed are counted the same way per (uid, pid, op, grant,
// path, target) and published with the refusals, in the order each was first
// seen, never folded: when kMaxAllowedKeys distinct ones are waiting, the
// filesystem thread waits until the worker has published them.
// Reports that do arrive while stopping are counted and published as a
// "reports_dropped" event, which `audit verify` reports as a loss.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/worker_thread.hpp"
#include "report/event_bus.hpp"
#include "report/reports.hpp"

namespace leasefs::report {

inline constexpr uint64_t kDefaultHashLimitBytes = uint64_t{64} << 20;

class Pump final : public Sink {
 public:
  static constexpr size_t kMaxRefusalKeys = 4096;
  static constexpr size_t kMaxAllowedKeys = 4096;
  // A refusal reaches status.md and the audit within this (a flood folds into one
  // event per key an interval): the README's tour reads status.md right after one.
  static constexpr std::chrono::milliseconds kRefusalInterval{50};
  static constexpr std::chrono::milliseconds kCloseGather{10};

  // Takes each interval's refusal events, and how many more were folded away
  // (the service's Service::note_refusals).
  using Bookkeeping =
      std::function<void(const std::vector<nlohmann::json>& refusals, uint64_t extra)>;

  // `bookkeeping` may be empty (events only). `capacity` bounds the queue of
  // files closed after a leased write.
  Pump(Bookkeeping bookkeeping, EventBus& events,
       uint64_t hash_limit_bytes = kDefaultHashLimitBytes, size_t capacity = 4096);
  ~Pump() override;
  Pump(const Pump&) = delete;
  Pump& operator=(const Pump&) = delete;

  void on_refusal(Refusal refusal) noexcept override;
  void on_write_closed(WriteClosed closed) noexcept override;
  void on_allowed(Allowed allowed) noexcept override;

  void start();
  // Publishes the refusals counted so far and waits until the service holds
  // them: `status` right after a refusal shows it, not a second later.
  void flush_refusals();
  // Publishes what is queued and counted, then joins the worker; idempotent.
  void stop();

  static nlohmann::json refusal_event(const Refusal& refusal);
  static nlohmann::json allowed_event(const Allowed& allowed);
  // Hashes `closed.content` unless it is larger than `hash_limit_bytes`.
  static nlohmann::json write_closed_event(const WriteClosed& closed, uint64_t hash_limit_bytes);

 private:
  void run();
  // Takes the counted refusals (caller holds mu_).
  std::vector<Refusal> take_refusals();
  void publish_refusals(std::vector<Refusal> refusals);
  void keep_books();  // hands refusals to the bookkeeping, on a thread of its own

  Bookkeeping bookkeeping_;
  EventBus& events_;
  uint64_t hash_limit_;
  size_t capacity_;

  std::mutex mu_;
  std::condition_variable cv_space_;  // writers wait on it for room in closed_
  std::deque<WriteClosed> closed_;
  std::map<std::string, Refusal> refusals_;  // key: uid/pid/process/op/reason/path
  std::map<std::string, Refusal> overflow_;  // key: uid/op/reason
  // Counted allowed mutations in the order first seen, and where each key's is.
  // An ordered index, not a hash map: the agent picks the paths, and keys made
  // to collide in an unseeded hash would cost each lookup the whole chain, under
  // the lock that `status` takes too; here a lookup is at most log2(4,096)
  // comparisons whatever the names.
  std::vector<Allowed> allowed_;
  std::map<std::string, size_t> allowed_at_;  // key: uid/pid/op/grant/path/target
  uint64_t dropped_allowed_ = 0;
  std::chrono::steady_clock::time_point next_flush_{};
  uint64_t dropped_closed_ = 0;
  uint64_t dropped_refusals_ = 0;
  bool stopped_ = false;  // the worker has returned: nothing is published any more
  base::WorkerThread worker_{mu_};

  // Refusals for status and status.md, bounded: past kMaxNoted the oldest are
  // folded into noted_extra_ (their count still reaches refusals_total).
  static constexpr size_t kMaxNoted = 64;
  std::mutex noted_mu_;
  std::condition_variable noted_idle_;  // flush_refusals() waits on it
  bool noting_ = false;                 // a batch is with the service
  std::vector<nlohmann::json> noted_;
  uint64_t noted_extra_ = 0;
  base::WorkerThread bookkeeper_{noted_mu_};  // woken by a refusal noted
};

}  // namespace leasefs::report

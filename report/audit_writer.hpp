// The one writer of the audit log: a thread that takes every event on the bus
// (a lossless subscriber, so nothing is missed: publishing waits while it is
// full) and appends them to memory/audit_log in batches.
//
// A batch is one write and one sync, paced by kPacing (base/batch_pacing.hpp),
// or at once when kMaxBatch events are waiting: a leased `git checkout` or untar
// closing thousands of files pays for ten syncs a second, not one per file or a
// hundred. A batch that cannot be appended is not forgotten: the
// next one begins with an "audit_lost" record saying how many events of which
// types were lost and why, which `audit verify` reports. The failpoint
// "audit.lose_batch" loses the first batch, to test exactly that.
//
// A batch that holds a record that ends a turn (`turn`, `end-turn`, `resume`,
// or a transition to completed or failed: signing::ends_a_turn) ends one: once it is
// appended, the head signer (report/head_signer.hpp) signs the chain's head as
// it is then, and its "head_signed" (or "head_unsigned") record follows at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>

#include "base/batch_pacing.hpp"
#include "base/disk_reserve.hpp"
#include "memory/audit_log.hpp"
#include "report/event_bus.hpp"
#include "report/head_signer.hpp"

namespace leasefs::report {

class AuditWriter {
 public:
  static constexpr size_t kQueueCapacity = 8192;
  static constexpr size_t kMaxBatch = 2048;
  // 10 ms after the first event of a quiet spell; in a burst, 100 ms apart.
  static constexpr base::BatchPacing kPacing{std::chrono::milliseconds(10),
                                             std::chrono::milliseconds(100)};
  static constexpr std::chrono::milliseconds kFullDiskRetry{100};
  static constexpr int kFullDiskRetries = 20;

  // Subscribes to `bus` and starts writing at once: subscribe before anything
  // publishes that the audit must hold. A batch that fails for want of space is
  // retried once with `reserve` given up; when the reserve is spent already, it
  // is retried every kFullDiskRetry, kFullDiskRetries times, before it is lost.
  AuditWriter(EventBus& bus, memory::AuditLog& audit, base::DiskReserve& reserve);
  ~AuditWriter();
  AuditWriter(const AuditWriter&) = delete;
  AuditWriter& operator=(const AuditWriter&) = delete;

  // Closes the queue, writes what is in it, and joins; idempotent.
  void stop();

  // Signs the head at each turn's end from now on; nullptr: no longer. The
  // signer outlives the writer's thread (stop() first).
  void set_head_signer(HeadSigner* signer) noexcept { signer_.store(signer); }

  // While the lock is held no batch is appended and no head signed: the chain
  // and the signed heads read under it agree (a turn's end is never seen
  // without the head that follows it).
  std::unique_lock<std::mutex> hold_appends() { return std::unique_lock(append_mu_); }

 private:
  void run();
  std::vector<memory::AuditRecord> append_once_there_is_room(
      const std::vector<base::JsonText>& batch, const std::exception& first);
  // After `batch` was appended as `records`: the signed head, if it ended a turn.
  void sign_if_turn_ended(const std::vector<base::JsonText>& batch,
                          const std::vector<memory::AuditRecord>& records);

  memory::AuditLog& audit_;
  base::DiskReserve& reserve_;
  std::atomic<HeadSigner*> signer_{nullptr};
  std::mutex append_mu_;  // held across a batch's append and its signed head
  std::shared_ptr<EventQueue> queue_;
  std::thread thread_;
};

}  // namespace leasefs::report

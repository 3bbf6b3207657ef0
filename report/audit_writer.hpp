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
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>

#include "base/batch_pacing.hpp"
#include "base/disk_reserve.hpp"
#include "memory/audit_log.hpp"
#include "report/event_bus.hpp"

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

 private:
  void run();
  void append_once_there_is_room(const std::vector<base::JsonText>& batch,
                                 const std::exception& first);

  memory::AuditLog& audit_;
  base::DiskReserve& reserve_;
  std::shared_ptr<EventQueue> queue_;
  std::thread thread_;
};

}  // namespace leasefs::report

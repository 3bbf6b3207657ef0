// The one writer of the audit log: a thread that takes every event on the bus
// (a lossless subscriber, so nothing is missed: publishing waits while it is
// full) and appends them to memory/audit_log in batches.
//
// A batch is one write and one sync. The first event after a quiet spell waits
// kGather for company; in a burst, batches begin at least kSyncEvery apart (at
// once when kMaxBatch are waiting): the log's fdatasync commits the backing file
// system's journal, and on ext4 every rename, create and unlink in the tree
// waits on that commit, so a leased `git checkout` or untar pays for ten syncs
// a second, not a hundred. A batch that cannot be appended is not forgotten: the
// next one begins with an "audit_lost" record saying how many events of which
// types were lost and why, which `audit verify` reports. The failpoint
// "audit.lose_batch" loses the first batch, to test exactly that.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>

#include "base/disk_reserve.hpp"
#include "memory/audit_log.hpp"
#include "report/event_bus.hpp"

namespace leasefs::report {

class AuditWriter {
 public:
  static constexpr size_t kQueueCapacity = 8192;
  static constexpr size_t kMaxBatch = 2048;
  static constexpr std::chrono::milliseconds kGather{10};
  static constexpr std::chrono::milliseconds kSyncEvery{100};
  using Clock = std::chrono::steady_clock;

  // When a batch whose first event came at `first` is appended, the previous
  // batch having been appended at `previous`: kGather after `first`, and not
  // before kSyncEvery after `previous`.
  static Clock::time_point append_at(Clock::time_point first, Clock::time_point previous) {
    return std::max(first + kGather, previous + kSyncEvery);
  }
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

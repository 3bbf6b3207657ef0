// .longrun/state.log: the write-ahead record of the task state (I7). Each change is
// one line, `<sha256 of the payload> <payload>\n`, whose payload holds a sequence
// number and the whole new state; state.json holds the state as of a sequence
// number and is rewritten only when the log is compacted (state/state_store.cpp).
//
// Durability is a group commit: append() is one write(2), so a change survives the
// daemon's own crash as soon as it returns; a syncer thread then makes everything
// appended so far durable with one fdatasync, however many commands wrote records
// meanwhile, and wait_durable() waits for the one that covers a record. A record
// nobody will wait for (a revocation: a restart revokes every lease anyway) lets
// the syncer gather, paced by kPacing (base/batch_pacing.hpp: 10 ms after a
// quiet spell, 100 ms apart in a burst), so that turns in a loop cost ten syncs
// a second, not one each, and leave the disk to the appends; any record or wait
// that is urgent ends the gathering at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/batch_pacing.hpp"
#include "base/json_text.hpp"
#include "base/worker_thread.hpp"
#include "state/longrun_dir.hpp"

namespace leasefs::state {

class StateLog {
 public:
  static constexpr const char* kFileName = "state.log";
  static constexpr base::BatchPacing kPacing{std::chrono::milliseconds(10),
                                             std::chrono::milliseconds(100)};

  // When a record is to be synced: at once (its reply waits for it), or paced
  // by kPacing together with what follows (nothing waits for it).
  enum class Sync { kNow, kGathered };

  // Opens .longrun/state.log, creating it empty. Throws Error{io_error}.
  explicit StateLog(const LongrunDir& dir);
  // Syncs what was appended, then stops the syncer.
  ~StateLog();
  StateLog(const StateLog&) = delete;
  StateLog& operator=(const StateLog&) = delete;

  struct Record {
    uint64_t seq = 0;
    nlohmann::json state;
  };
  // Every record, oldest first. A torn last line (a crash in the middle of an
  // append: no newline, or a checksum that does not match) is cut off the file,
  // since no command was ever answered for it; any other line that does not check
  // is Error{state_corrupt} naming the line, and the file is left as it is.
  std::vector<Record> read_all();

  // Writes one record. Throws Error{io_error} when it cannot, or when an earlier
  // sync failed (from then on the log takes nothing: fail closed).
  void append(uint64_t seq, const base::JsonText& state, Sync sync = Sync::kNow);
  // Returns once every record up to `seq` is on disk. Throws Error{io_error} if
  // the fdatasync that was to cover it failed.
  void wait_durable(uint64_t seq);
  // Empties the file: state.json, already durable, holds everything up to `seq`.
  void truncate(uint64_t seq);
  uint64_t size_bytes() const;

 private:
  void sync_loop();
  [[noreturn]] void fail(const std::string& what, int err) const;

  std::string shown_;  // the path, for messages
  int fd_ = -1;

  mutable std::mutex mu_;
  std::condition_variable done_;  // durable_ moved, or failed_
  uint64_t appended_ = 0;
  uint64_t urgent_ = 0;  // the last record to be synced at once, or waited for
  uint64_t durable_ = 0;
  uint64_t bytes_ = 0;
  int failed_ = 0;  // errno of a failed write or sync; sticky
  // Woken when appended_ or urgent_ moves past durable_; last: stopped first.
  base::WorkerThread syncer_{mu_};
};

}  // namespace leasefs::state

// The task state on disk, inside .longrun/ (I7). Each change is a record appended
// to state.log (state/state_log.hpp), made durable by group commit; state.json
// holds the state as of a record and is replaced atomically (temp file, fsync,
// rename, fsync of the directory) when the log is compacted: at start, at a clean
// stop, and when the log passes kCompactBytes. pending_checkpoint.json is written
// the same atomic way. An unreadable or invalid state is StateCorrupt and the
// files are left as they were.
#pragma once

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "gate/task_state.hpp"
#include "state/longrun_dir.hpp"
#include "state/state_log.hpp"
#include "state/state_text.hpp"

namespace leasefs::state {

// A checkpoint between its intent and its completion (I2): written before the
// memory save, removed once state.json has it.
struct PendingCheckpoint {
  std::string checkpoint_id;
  std::string title;
  std::vector<std::string> keywords;
  std::string text;
  gate::TaskState state;  // the state the checkpoint leads to
};

class StateStore {
 public:
  // The log grows to about this size before its records are folded into state.json.
  // A fold syncs two files on the request's path; a larger log only costs its
  // replay at a start after a crash (about 50 ms per two MiB here, bench/README.md).
  static constexpr uint64_t kCompactBytes = 4 << 20;

  explicit StateStore(const LongrunDir& dir);
  // Folds the log into state.json, so that a stopped root has one readable file.
  ~StateStore();

  // state.json, then the log's records after it; nullopt when there is neither (a
  // fresh root). Any lease is revoked on the way in: a restart never inherits
  // writes (I3). What was loaded is written back as state.json and the log
  // emptied. Throws Error{state_corrupt} naming the file and what is wrong.
  std::optional<gate::TaskState> load();
  // Appends the state to the log (one write) and returns its ticket for
  // wait_durable(). A daemon crash after this returns keeps the state.
  uint64_t append(const gate::TaskState& state, StateLog::Sync sync = StateLog::Sync::kNow);
  // Returns once the state of `ticket` (and every one before) is on disk.
  void wait_durable(uint64_t ticket);
  // append() and wait_durable() together.
  void save(const gate::TaskState& state);

  bool has_pending_checkpoint() const noexcept { return pending_.load(); }

  // Throws Error{state_corrupt} naming the file when it is not a checkpoint.
  std::optional<PendingCheckpoint> load_pending_checkpoint() const;
  void save_pending_checkpoint(const PendingCheckpoint& checkpoint);
  void clear_pending_checkpoint();

  // Writes `content` to .longrun/<name> atomically. `durable` adds the fsyncs that
  // make it survive a power loss; status.md, rewritten often and derived, skips them.
  void write_file(const char* name, std::string_view content, bool durable = true) const;

  const LongrunDir& dir() const noexcept { return dir_; }

 private:
  // state.json := `state` as of record `seq`, then the log is emptied.
  void compact(const gate::TaskState& state, uint64_t seq);

  const LongrunDir& dir_;
  StateLog log_;
  uint64_t seq_ = 0;                          // of the last record written (appends are serialized)
  StateText state_text_;                      // the log's records
  gate::TaskState last_;                      // its state, for a compaction at the stop
  bool dirty_ = false;                        // records appended since the last compaction
  bool snapshot_written_ = false;             // state.json exists
  mutable std::atomic<bool> pending_{false};  // pending_checkpoint.json exists
};

}  // namespace leasefs::state

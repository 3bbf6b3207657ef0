// state.json and pending_checkpoint.json inside .longrun/ (I7): every write is
// atomic (temp file, fsync, rename, fsync of the directory); an unreadable or
// invalid state is StateCorrupt and the file is left as it was.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "gate/task_state.hpp"
#include "service/longrun_dir.hpp"

namespace leasefs::gate {

// A checkpoint between its intent and its completion (I2): written before the
// memory save, removed once state.json has it.
struct PendingCheckpoint {
  std::string checkpoint_id;
  std::string title;
  std::vector<std::string> keywords;
  std::string text;
  TaskState state;  // the state the checkpoint leads to
};

class StateStore {
 public:
  explicit StateStore(const LongrunDir& dir) : dir_(dir) {}

  // nullopt when there is no state.json (a fresh root). Any lease in the file is
  // revoked on the way in: a restart never inherits writes (I3).
  // Throws Error{state_corrupt} naming the file and what is wrong.
  std::optional<TaskState> load() const;
  void save(const TaskState& state) const;

  // Throws Error{state_corrupt} naming the file when it is not a checkpoint.
  std::optional<PendingCheckpoint> load_pending_checkpoint() const;
  void save_pending_checkpoint(const PendingCheckpoint& checkpoint) const;
  void clear_pending_checkpoint() const;

  // Writes `content` to .longrun/<name> atomically. `durable` adds the fsyncs that
  // make it survive a power loss; status.md, rewritten often and derived, skips them.
  void write_file(const char* name, std::string_view content, bool durable = true) const;

  const LongrunDir& dir() const noexcept { return dir_; }

 private:
  const LongrunDir& dir_;
};

}  // namespace leasefs::gate

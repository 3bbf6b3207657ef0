// Atomic replacement: write a temp file in the same directory, fsync it, rename it
// over the target, fsync the directory. A crash before the rename leaves the old
// file; after it, the new one. The temp file of a crashed write is ignored on load.
// state.json carries "log_seq", the last record of state.log it holds: a crash
// between its rename and the log's truncation leaves records that loading skips.
#include "state/state_store.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "base/error.hpp"
#include "base/failpoint.hpp"
#include "base/would_block.hpp"

namespace leasefs::state {

namespace {

constexpr const char* kStateFile = "state.json";
constexpr const char* kPendingFile = "pending_checkpoint.json";

[[noreturn]] void io_fail(const std::string& what, const std::string& file) {
  throw_io_error(what + " " + file, errno);
}

// Whole file, or nullopt when it does not exist.
std::optional<std::string> read_file(int dir_fd, const char* name, const std::string& shown) {
  base::UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    if (errno == ENOENT) return std::nullopt;
    io_fail("cannot open", shown);
  }
  std::string content;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail("cannot read", shown);
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
  }
  return content;
}

}  // namespace

StateStore::StateStore(const LongrunDir& dir) : dir_(dir), log_(dir) {
  pending_ = ::faccessat(dir_.fd(), kPendingFile, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

StateStore::~StateStore() {
  if (!dirty_) return;
  try {
    compact(last_, seq_);
  } catch (const std::exception& e) {
    spdlog::warn("state.log not folded into state.json at the stop ({}); the next start does it",
                 e.what());
  }
}

void StateStore::write_file(const char* name, std::string_view content, bool durable) const {
  const std::string shown = dir_.root() + "/.longrun/" + name;
  const std::string tmp = std::string(".") + name + ".tmp";
  base::UniqueFd fd(::openat(dir_.fd(), tmp.c_str(),
                             O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) io_fail("cannot create", shown + ".tmp");
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail("cannot write", shown + ".tmp");
    }
    done += static_cast<size_t>(n);
  }
  // With --agent, what the agent may read is its group's before it has a name.
  if (auto gid = dir_.agent_gid(); gid && LongrunDir::is_agent_readable(name)) {
    if (::fchown(fd.get(), static_cast<uid_t>(-1), *gid) != 0 || ::fchmod(fd.get(), 0640) != 0) {
      io_fail("cannot share", shown + ".tmp");
    }
  }
  if (durable && ::fsync(fd.get()) != 0) io_fail("cannot fsync", shown + ".tmp");
  fd.reset();
  if (std::strcmp(name, kStateFile) == 0) base::failpoint("state.after_tmp");
  if (::renameat(dir_.fd(), tmp.c_str(), dir_.fd(), name) != 0)
    io_fail("cannot rename onto", shown);
  if (durable && ::fsync(dir_.fd()) != 0) io_fail("cannot fsync the directory of", shown);
}

std::optional<gate::TaskState> StateStore::load() {
  const std::string shown = dir_.root() + "/.longrun/" + kStateFile;
  auto text = read_file(dir_.fd(), kStateFile, shown);
  auto corrupt = [&](const std::string& file, const std::string& what) {
    return Error(Errc::kStateCorrupt,
                 file + " is corrupt: " + what +
                     ". leasefs will not start from an empty state over it; restore the file "
                     "from a backup, or move it aside: without state.json, leasefs rebuilds "
                     "the task from the newest checkpoint in memory when it starts.");
  };
  std::optional<gate::TaskState> state;
  uint64_t snapshot_seq = 0;
  snapshot_written_ = text.has_value();
  if (text) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::parse_error& e) {
      throw corrupt(shown, text->empty() ? std::string("the file is empty") : e.what());
    }
    try {
      state = gate::task_state_from_json(j);
      if (j.contains("log_seq")) snapshot_seq = j.at("log_seq").get<uint64_t>();
    } catch (const std::exception& e) {
      throw corrupt(shown, e.what());
    }
  }
  // The changes made after state.json was last written, oldest first.
  bool replayed = false;
  seq_ = snapshot_seq;
  for (auto& record : log_.read_all()) {
    if (record.seq <= snapshot_seq) continue;  // already folded in (a crash before truncation)
    try {
      state = gate::task_state_from_json(record.state);
    } catch (const std::invalid_argument& e) {
      throw corrupt(dir_.root() + "/.longrun/" + StateLog::kFileName,
                    "record " + std::to_string(record.seq) + ": " + e.what());
    }
    seq_ = record.seq;
    replayed = true;
  }
  if (!state) return std::nullopt;
  // A restart revokes: no lease survives the process that granted it (I3).
  state->grants.clear();
  last_ = *state;
  if (replayed || log_.size_bytes() > 0) compact(*state, seq_);
  return state;
}

uint64_t StateStore::append(const gate::TaskState& state, StateLog::Sync sync) {
  // The first state of a fresh root is written as state.json at once, so that a
  // root with a task always has one. Folding rewrites state.json with an fsync:
  // never on a thread that must not wait (nothing is written before this).
  const bool fold = !snapshot_written_ || log_.size_bytes() >= kCompactBytes;
  if (fold) base::would_block_here();
  const uint64_t seq = seq_ + 1;
  log_.append(seq, state_text_.of(state), sync);
  seq_ = seq;
  last_ = state;
  dirty_ = true;
  if (fold) {
    try {
      compact(state, seq);
    } catch (const std::exception& e) {
      // The record is in the log; folding it in can wait for the next try.
      spdlog::warn("state.log not folded into state.json: {}", e.what());
    }
  }
  return seq;
}

void StateStore::wait_durable(uint64_t ticket) {
  log_.wait_durable(ticket);
}

void StateStore::save(const gate::TaskState& state) {
  wait_durable(append(state));
}

void StateStore::compact(const gate::TaskState& state, uint64_t seq) {
  nlohmann::json j = to_json(state);
  j["log_seq"] = seq;
  write_file(kStateFile, j.dump(2) + "\n");
  log_.truncate(seq);
  dirty_ = false;
  snapshot_written_ = true;
}

std::optional<PendingCheckpoint> StateStore::load_pending_checkpoint() const {
  const std::string shown = dir_.root() + "/.longrun/" + kPendingFile;
  auto text = read_file(dir_.fd(), kPendingFile, shown);
  pending_ = text.has_value();
  if (!text) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(*text);
    PendingCheckpoint p;
    p.checkpoint_id = j.at("checkpoint_id").get<std::string>();
    p.title = j.at("title").get<std::string>();
    p.keywords = j.at("keywords").get<std::vector<std::string>>();
    p.text = j.at("text").get<std::string>();
    p.state = gate::task_state_from_json(j.at("state"));
    if (p.checkpoint_id.empty() || !p.state.has_task()) {
      throw std::invalid_argument("no checkpoint id or no task");
    }
    return p;
  } catch (const std::exception& e) {
    throw Error(Errc::kStateCorrupt, shown + " is not a pending checkpoint (" + e.what() +
                                         "); move it aside to drop it");
  }
}

void StateStore::save_pending_checkpoint(const PendingCheckpoint& p) {
  const nlohmann::json j = {{"checkpoint_id", p.checkpoint_id},
                            {"title", p.title},
                            {"keywords", p.keywords},
                            {"text", p.text},
                            {"state", to_json(p.state)}};
  write_file(kPendingFile, j.dump(2) + "\n");
  pending_ = true;
}

void StateStore::clear_pending_checkpoint() {
  if (::unlinkat(dir_.fd(), kPendingFile, 0) != 0 && errno != ENOENT) {
    io_fail("cannot remove", dir_.root() + "/.longrun/" + kPendingFile);
  }
  pending_ = false;
  if (::fsync(dir_.fd()) != 0) io_fail("cannot fsync", dir_.root() + "/.longrun");
}

}  // namespace leasefs::state

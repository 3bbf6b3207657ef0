// The gate as the filesystem sees it: a lock-free check against the published
// snapshot, and two reports flowing the other way (refusals, files closed after
// a leased write). The control plane publishes snapshots and consumes the reports.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.hpp"
#include "base/unique_fd.hpp"
#include "gate/decision.hpp"
#include "gate/effect.hpp"
#include "gate/snapshot_cell.hpp"
#include "gate/temp_sibling.hpp"

namespace leasefs::gate {

struct Refusal {
  Op op = Op::kWrite;
  std::string path;  // relative to the root
  Caller caller;
  std::string process;  // /proc/<pid>/comm, resolved by the gate
  DenyReason reason = DenyReason::kNone;
  uint64_t count = 1;  // how many identical refusals this event stands for
  int64_t at_ms = 0;
  uint64_t turn = 0;  // the turn it was refused in
};

// A mutation the gate allowed (every op but the writes through an open file,
// which arrive as WriteClosed when the file is closed).
struct Allowed {
  Op op = Op::kCreate;
  std::string path;    // relative to the root
  std::string target;  // the new name of a rename or link, else empty
  Caller caller;
  std::string grant_id;
  uint64_t count = 1;  // how many identical ones this stands for
};

struct WriteClosed {
  std::string path;  // relative to the root, as opened
  uint64_t bytes_written = 0;
  std::string grant_id;  // the grant the file was opened under
  Caller caller;
  base::UniqueFd content;  // read-only fd on the file underneath, for hashing; may be empty
};

// Told of every publication, from the publishing thread: just before the new
// snapshot takes effect (the old one still judges), and after. The filesystem
// flushes shared mappings before, and closes its temporary siblings after.
class PublishListener {
 public:
  virtual ~PublishListener() = default;
  virtual void on_publishing() noexcept {}
  virtual void on_published(const GateSnapshot& snapshot) noexcept = 0;
};

// Implemented by the control plane. Called from filesystem threads: must not block
// for long (queue and return).
class GateEventSink {
 public:
  virtual ~GateEventSink() = default;
  virtual void on_refusal(Refusal refusal) noexcept = 0;
  virtual void on_write_closed(WriteClosed closed) noexcept = 0;
  virtual void on_allowed(Allowed allowed) noexcept { (void)allowed; }
};

struct Verdict {
  bool allowed = false;
  DenyReason reason = DenyReason::kNone;
  std::string grant_id;  // covering grant when allowed
};

class Gate {
 public:
  Gate();

  // Hot path for every mutation; lock-free. Path relative to the root.
  Verdict check(Op op, std::string_view path, const Caller& caller) const noexcept;

  // Composed effects (see effect.hpp), judged against one snapshot. When refused,
  // `refused` names the effect that was (for the refusal report).
  Verdict check_rename(const RenamePlan& plan, const Caller& caller, Effect* refused) const;
  Verdict check_link(std::string_view source, std::string_view name, const Caller& caller,
                     Effect* refused) const;

  // Temporary siblings (temp_sibling.hpp). `turn` receives the turn a new sibling
  // belongs to.
  Verdict check_temp_sibling(std::string_view path, const Caller& caller, uint64_t* turn) const;
  Verdict check_on_temp_sibling(Op op, uint64_t turn, const Caller& caller) const;
  Verdict check_temp_sibling_rename(std::string_view from, std::string_view to, uint64_t turn,
                                    const Caller& caller) const;
  void set_publish_listener(PublishListener* listener) noexcept;  // nullptr detaches

  // Whether check() needs a real path beyond the protected-path test: true when a
  // grant in force is narrowed by path globs. Lets the filesystem skip path work.
  bool needs_path() const noexcept;

  SnapshotCell<GateSnapshot>::ReadGuard snapshot() const noexcept { return cell_.read(); }

  // Control plane side. When publish() returns, no check that starts afterwards
  // sees the previous snapshot (I6).
  void publish(GateSnapshot snapshot);

  void set_sink(GateEventSink* sink) noexcept;  // nullptr detaches

  // The mount's --protect globs (protected_paths.hpp), normalized; every later
  // publication carries them. Set once, before the first grant is published.
  void set_protected_globs(std::vector<std::string> globs);
  std::vector<std::string> protected_globs() const;

  // Filesystem side. Every refusal is passed on (the sink coalesces and counts);
  // the process name of a (pid, op, path) is read once per coalescing window.
  // `at_ms` and `turn`: when it was refused, for one reported later (0: now).
  void report_refusal(Op op, std::string_view path, const Caller& caller, DenyReason reason,
                      int64_t at_ms = 0, uint64_t turn = 0) noexcept;
  void report_write_closed(WriteClosed closed) noexcept;
  // Every mutation allowed, after the verdict and before it runs (the audit
  // keeps them all; the sink may make the caller wait, it never drops one).
  void report_allowed(Allowed allowed) noexcept;

  static constexpr int64_t kCoalesceWindowMs = 2000;

 private:
  SnapshotCell<GateSnapshot> cell_;
  std::atomic<GateEventSink*> sink_{nullptr};
  mutable std::mutex listener_mu_;  // held while a listener runs, so detaching waits
                                    // for it; also guards protected_
  PublishListener* listener_ = nullptr;
  std::vector<std::string> protected_;

  struct RecentRefusal {
    int64_t first_ms = 0;
    std::string process;
  };
  static constexpr size_t kMaxRecent = 4096;
  std::mutex recent_mu_;
  std::unordered_map<std::string, RecentRefusal> recent_;  // key: pid/op/path
  int64_t last_sweep_ms_ = 0;
};

using base::now_ms;  // wall clock, milliseconds since the epoch
std::string process_name(pid_t pid);

}  // namespace leasefs::gate

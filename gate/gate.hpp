// The gate as the filesystem sees it: a lock-free check against the published
// snapshot. The control plane publishes snapshots; what the filesystem reports
// back (refusals, closed files) goes through report/, not through here.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.hpp"
#include "gate/decision.hpp"
#include "gate/effect.hpp"
#include "gate/publish_listener.hpp"
#include "gate/snapshot_cell.hpp"
#include "gate/temp_sibling.hpp"

namespace leasefs::gate {

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
  Verdict check_temp_sibling_rename(std::string_view from, std::string_view to, bool to_exists,
                                    uint64_t turn, const Caller& caller) const;
  void set_publish_listener(PublishListener* listener) noexcept;  // nullptr detaches

  // Whether check() needs a real path beyond the protected-path test: true when a
  // grant in force is narrowed by path globs. Lets the filesystem skip path work.
  bool needs_path() const noexcept;

  SnapshotCell<GateSnapshot>::ReadGuard snapshot() const noexcept { return cell_.read(); }

  // Control plane side. When publish() returns, no check that starts afterwards
  // sees the previous snapshot (I6).
  void publish(GateSnapshot snapshot);

  // The protected globs (protected_paths.hpp), normalized; every later
  // publication carries them. The mount's --protect ones are set before the first
  // grant is published; the service sets them again, with central policy's added
  // (central_policy.hpp), and publishes.
  void set_protected_globs(std::vector<std::string> globs);
  std::vector<std::string> protected_globs() const;

 private:
  SnapshotCell<GateSnapshot> cell_;
  mutable std::mutex listener_mu_;  // held while a listener runs, so detaching waits
                                    // for it; also guards protected_
  PublishListener* listener_ = nullptr;
  std::vector<std::string> protected_;
};

using base::now_ms;  // wall clock, milliseconds since the epoch

}  // namespace leasefs::gate

// The operations of the control plane, one method per protocol command. Each takes
// the caller's role, enforces it, changes state in the documented order, publishes
// the new gate snapshot before returning, and emits an event. Methods are
// serialized by one mutex; errors are Error with a stable code.
//
// One file per family of use cases: the task (service/service_task.cpp), the
// lease (service/service_lease.cpp), memory (service/service_memory.cpp), ask
// mode (service/service_ask.cpp) and foreign mounts
// (service/service_foreign_mounts.cpp); the journal's are a class of their own
// (service/journal_use_cases.hpp). What they all go through, the commit of a new
// state and its publication, is in service/service.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/disk_reserve.hpp"
#include "base/would_block.hpp"
#include "gate/actor.hpp"
#include "gate/ask.hpp"
#include "gate/central_policy.hpp"
#include "gate/gate.hpp"
#include "gate/task_state.hpp"
#include "memory/ledger.hpp"
#include "memory/memory_store.hpp"
#include "report/event_bus.hpp"
#include "service/args.hpp"
#include "service/foreign_mount.hpp"
#include "service/grant_expiry.hpp"
#include "service/refusal_feed.hpp"
#include "service/results.hpp"
#include "state/state_store.hpp"
#include "state/status_file.hpp"

namespace leasefs::service {

// The use cases publish their events on the report room's bus.
using report::EventBus;

class Service {
 public:
  // The ledger may be null (tests of the state machine alone); request/approve/
  // reject then answer an error.
  Service(state::StateStore& store, memory::MemoryStore& memory, memory::Ledger* ledger,
          gate::Gate& gate, EventBus& events);

  // Each answers a plain result (service/results.hpp); control/ renders it.
  StatusReport status();

  // The task (service/service_task.cpp).
  StartResult start(const StartArgs& args, const gate::Actor& actor);
  TurnResult turn(const gate::Actor& actor);
  TurnResult end_turn(const gate::Actor& actor);
  CheckpointResult checkpoint(const CheckpointArgs& args, const gate::Actor& actor);
  ResumeResult resume(const std::optional<std::string>& task_id, const gate::Actor& actor);
  TransitionResult transition(gate::TaskStatus to, const std::string& reason,
                              const gate::Actor& actor);

  // The lease (service/service_lease.cpp).
  GrantResult grant(const GrantArgs& args, const gate::Actor& actor);
  RevokeResult revoke(const std::optional<std::string>& grant_id, const gate::Actor& actor);
  RequestResult request(const RequestArgs& args, const gate::Actor& actor);
  // `source` is what the audit records as the decision's origin: "local", or
  // "fleet:<central decision id>" when a bridge applies a central decision.
  ApproveResult approve(const std::string& request_id, const std::string& reason,
                        const gate::Actor& actor, const std::string& source = "local");
  RejectResult reject(const std::string& request_id, const std::string& reason,
                      const gate::Actor& actor, const std::string& source = "local");

  // A fleet bridge's report (approvers only): the centre reachable or not, a
  // stale central decision dropped. Audited; shown by status and status.md.
  FleetLink fleet_report(const FleetReportArgs& args, const gate::Actor& actor);

  // Central policy (gate/central_policy.hpp; service/service_policy.cpp), sent by
  // a fleet bridge (approvers only): checked in full, merged with the daemon's own
  // settings so that nothing loosens, kept in .longrun/policy.json, audited
  // (policy_applied, or policy_refused with nothing of it applied). Answers the
  // policy now in force, as status shows it.
  nlohmann::json apply_policy(const nlohmann::json& policy, const gate::Actor& actor);

  // Memory (service/service_memory.cpp).
  MemorySearchResult memory_search(const std::string& query, size_t limit);
  MemorySaveResult memory_save(const std::string& title, const std::string& content,
                               const std::vector<std::string>& keywords, const gate::Actor& actor);

  // Ask mode (gate/ask.hpp; service/service_ask.cpp). Before the control plane
  // starts: where answers go, and the mount's --ask in milliseconds (0 off).
  void set_ask_channel(gate::AskChannel* channel, int64_t default_ms);
  // A refused mutation waits for a person: a request in the ledger on behalf of
  // the process, shown in status and watch. One that cannot be put to a person
  // (no task in progress, another turn) is answered "no" at once.
  void open_ask(const gate::Ask& ask);
  // The filesystem stopped waiting (timeout, interrupted, end of turn): the
  // request is closed, so that no later approval issues a grant nobody waits for.
  void close_ask(uint64_t ask_id, gate::AskEnd end);
  // The `ask` command: this task's ask mode, overriding the mount's (approvers
  // only). `ms` 0 turns it off; nullopt returns to the mount's.
  SetAskResult set_ask(std::optional<int64_t> ms, const gate::Actor& actor);

  // The mounts no approver made on or beneath the tree, as the daemon's mount
  // watch sees them now (service/service_foreign_mounts.cpp): the first revokes
  // every grant; while any is listed, grant and approve are refused.
  void set_foreign_mounts(std::vector<ForeignMount> mounts);

  // An extra `file_plane` object in status (descriptors, busy processes), from
  // the daemon, which owns the file system. Set before the control plane starts.
  void set_file_plane_status(std::function<nlohmann::json()> fn) {
    auto lock = lock_service();
    file_plane_status_ = std::move(fn);
  }

  // Whether the audit's heads are signed (report/head_signer.hpp), for status's
  // `signed_heads`. Set before the control plane starts.
  void set_heads_status(std::function<nlohmann::json()> fn) {
    auto lock = lock_service();
    heads_status_ = std::move(fn);
  }
  // Why the audit's heads go unsigned, for status.md; empty while they are signed.
  void set_heads_note(std::string note);

  // The disk's reserve (base/disk_reserve.hpp), for status and status.md. Set
  // before the control plane starts.
  void set_disk_reserve(const base::DiskReserve* reserve) {
    auto lock = lock_service();
    reserve_ = reserve;
  }
  // The disk became full, or has room again: status.md says so.
  void disk_changed() {
    auto lock = lock_service();
    write_status();
  }

  // Returns once this thread's last state change is on disk; the control socket
  // calls it before each reply, outside the service's lock, so that one fdatasync
  // covers the changes of every client that waits meanwhile (group commit). A
  // change that could not be made durable revokes every lease and throws.
  void await_durable();

  // Returns once status.md holds the state as of this call (it is written off
  // the commands' path).
  void flush_status();

  // The current state (a copy), for status.md and tests.
  gate::TaskState state() const;
  // Recent refusals, newest last, for status and status.md, a batch at a time
  // (one status.md write for all of them). `extra` counts refusals beyond these (folded away to
  // keep the batch bounded).
  void note_refusals(const std::vector<nlohmann::json>& refusals, uint64_t extra = 0);
  // The refusals handed back to the agent's host, a tool call at a time.
  RefusalFeed& refusal_feed() noexcept { return refusal_feed_; }

 private:
  // When a change's state record must be on disk: before its reply (await_durable),
  // or soon after (revocations, and grants, whose durable record is the ledger's:
  // a restart revokes every lease anyway).
  enum class Durability { kBeforeReply, kAfterReply };
  // Every entry point takes the service's lock here. Inside a base::NonBlockingScope
  // (the control socket's loop answering a command itself) a held lock throws
  // base::WouldBlock instead, before anything has changed.
  std::unique_lock<std::mutex> lock_service() const { return base::lock_or_would_block(mu_); }
  // Appends `next` to the state log, runs `before_effect`, publishes the snapshot,
  // then makes `next` current. On a failed write the current state keeps no lease
  // (fail closed); if `before_effect` throws, the current state stays as it was.
  // Either way the error propagates.
  void commit(gate::TaskState next, Durability durability = Durability::kBeforeReply,
              const std::function<void()>& before_effect = {});
  void publish_snapshot(const gate::TaskState& s);
  // A grant's TTL passed: published again, as at a revoke, and said (grant_expired).
  void grants_expired();
  void write_status();
  void emit(nlohmann::json event);
  void require_readable_state() const;

  // The task (service/service_task.cpp).
  CheckpointResult replay_pending(const state::PendingCheckpoint& pending,
                                  const gate::Actor& actor);
  // When state.json is missing: the task of the newest checkpoint marker, if any.
  void recover_from_memory();
  gate::TaskState task_from_checkpoint(const memory::Record& record);

  // The lease (service/service_lease.cpp).
  // Records `g` in the ledger and makes it a lease of `next`.
  void issue_grant(gate::TaskState next, const gate::Grant& g, int64_t ttl_ms);
  memory::Ledger& ledger();
  // The pending requests of the current task, as the ledger holds them. Read
  // again after every change the service makes to them, so that status asks no SQL.
  const std::vector<memory::Request>& pending_requests();
  // Runs `change` on the ledger's requests, then reads the pending ones again
  // (pending_requests()), whether `change` succeeded or threw.
  template <class Fn>
  decltype(auto) change_requests(Fn&& change) {
    struct Reload {
      Service* service;
      ~Reload() { service->reload_pending(); }
    } reload{this};
    pending_.reset();
    return change(ledger());
  }
  void reload_pending() noexcept;

  // Ask mode (service/service_ask.cpp): answers the ask waiting on `request_id`,
  // if any (caller holds mu_).
  void answer_ask(const std::string& request_id, bool approved);
  // Every ask of this turn ends: answered "no", its request closed with `why`.
  void end_asks(const std::string& why);
  // Closes the ledger request of an ask that ended (rejected by the daemon).
  void close_ask_request(const std::string& request_id, const std::string& why);
  AskStatus ask_status() const;

  // Central policy (service/service_policy.cpp). At start: the daemon's own
  // protected globs, and the policy last applied, as .longrun/policy.json has it.
  void load_policy();
  // What is in force as of `now_ms`, given to the gate (protected globs) and the
  // expiry thread; the caller publishes (caller holds mu_, or constructs).
  void refresh_policy(int64_t now_ms);
  // A rule's expiry passed: published again without it, and said (policy_expired).
  void policy_expired();
  // The policy as status shows it (caller holds mu_).
  nlohmann::json policy_json(int64_t now_ms) const;
  // The ask mode of the gate: the task's or the mount's, or the policy's when they are off.
  int64_t ask_ms_in_force() const;
  // A request every path of which an auto_approve rule covers is approved by the
  // daemon, as a grant narrowed to the rule's ops (caller holds mu_); a request
  // of ask mode, only when the rule's ops hold the class of the op that asked.
  // Fills `result`'s auto_grant and auto_source when it does.
  void auto_approve(RequestResult& result, gate::OpMask asked = 0);

  // Error{foreign_mount} while a foreign mount is listed (caller holds mu_;
  // service/service_foreign_mounts.cpp).
  void require_no_foreign_mount() const;

  std::function<nlohmann::json()> file_plane_status_;
  std::function<nlohmann::json()> heads_status_;
  std::string heads_note_;
  const base::DiskReserve* reserve_ = nullptr;
  state::StateStore& store_;
  state::StatusFile status_file_{store_};
  memory::MemoryStore& memory_;
  memory::Ledger* ledger_;
  gate::Gate& gate_;
  EventBus& events_;

  mutable std::mutex mu_;  // serializes commands; guards state_ and refusals_
  gate::TaskState state_;
  // Replaced, never changed: a status.md text waiting to be rendered holds one.
  std::shared_ptr<const std::vector<nlohmann::json>> refusals_ =
      std::make_shared<const std::vector<nlohmann::json>>();
  gate::AskChannel* ask_channel_ = nullptr;
  int64_t ask_default_ms_ = 0;
  std::map<std::string, uint64_t> asks_;  // request id -> the filesystem's ask id
  // Those of asks_ an operation waits on; the rest were refused at once (filed).
  std::set<std::string> waited_asks_;
  uint64_t refusals_total_ = 0;  // of this task, while the daemon runs
  RefusalFeed refusal_feed_;
  std::vector<ForeignMount> foreign_mounts_;
  std::optional<FleetLink> fleet_;  // guarded by mu_
  // Set when state.json could not be read at start: the daemon serves anyway,
  // read-only for everyone (no state change is saved, so the file is kept as it
  // was for repair), and status says what is wrong and how to repair it.
  std::string state_error_;
  // pending_requests()'s copy, for the task it was read for; reset by every
  // change to the ledger's requests (all of them go through this class).
  std::optional<std::vector<memory::Request>> pending_;
  std::string pending_task_;
  // Central policy: the daemon's own protected globs (the mount's), the policy
  // applied (its wire form, as kept on disk), and what is in force of it.
  std::vector<std::string> local_protected_;
  gate::CentralPolicy policy_;
  nlohmann::json policy_wire_;
  int64_t policy_applied_ms_ = 0;
  uint32_t policy_by_uid_ = 0;
  std::string policy_error_;  // why .longrun/policy.json could not be read back
  gate::EffectivePolicy effective_;
  int64_t policy_checked_ms_ = 0;  // policy_expired() said those up to this time
  GrantExpiry policy_expiry_{[this] { policy_expired(); }};
  // Publishes at every grant's expiry (grant_expiry.hpp); last, so that it stops first.
  int64_t last_expiry_ms_ = 0;  // grants_expired() said those up to this time
  GrantExpiry expiry_{[this] { grants_expired(); }};
};

}  // namespace leasefs::service

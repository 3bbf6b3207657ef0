// What every use case goes through: the state as loaded at start, the commit of a
// new state (state log, gate snapshot, status.md) and the wait for it to be
// durable; and the status the service reports.
#include "service/service.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "base/error.hpp"
#include "gate/central_policy.hpp"
#include "service/md_quote.hpp"
#include "service/status_report.hpp"

namespace leasefs::service {

using nlohmann::json;

namespace {

constexpr size_t kRecentRefusals = 10;

// The state log's ticket of this thread's last commit that must be durable before
// its reply (Service::await_durable).
thread_local uint64_t tls_durable_ticket = 0;
constexpr const char* kStateRepairHint =
    "To repair: stop the daemon (leasefs unmount ROOT), fix or move aside "
    "ROOT/.longrun/state.json (the last checkpoint is in memory; without the file the task is "
    "recovered from it), then mount again";

}  // namespace

Service::Service(state::StateStore& store, memory::MemoryStore& memory, memory::Ledger* ledger,
                 gate::Gate& gate, EventBus& events)
    : store_(store), memory_(memory), ledger_(ledger), gate_(gate), events_(events) {
  try {
    if (auto loaded = store_.load()) {
      state_ = std::move(*loaded);  // load() has already dropped any lease (I7: I3)
    } else {
      recover_from_memory();  // no state.json: the newest checkpoint marker, if any
    }
  } catch (const Error& e) {
    if (e.errc() != Errc::kStateCorrupt) throw;
    // Come up anyway, failing closed: an unmounted root would be unprotected.
    state_error_ = e.what();
    state_ = gate::TaskState{};
    spdlog::error("{}; serving read-only until it is repaired", state_error_);
  }
  if (ledger_) {
    // A grant is recorded before it takes effect; one recorded just before a
    // crash must not have its id issued again.
    auto last = static_cast<uint64_t>(std::max<int64_t>(ledger_->last_grant_number(), 0));
    state_.grant_seq = std::max(state_.grant_seq, last);
  }
  reload_pending();
  load_policy();  // the central policy last applied holds from the first publication
  publish_snapshot(state_);
  write_status();
  flush_status();  // a mounted root has its status.md before anyone can ask
}

gate::TaskState Service::state() const {
  auto lock = lock_service();
  return state_;
}

void Service::publish_snapshot(const gate::TaskState& s) {
  gate::GateSnapshot snap;
  snap.has_task = s.has_task();
  snap.status = s.status;
  snap.turn = s.turn_index;
  snap.grants = s.grants;
  // Ask mode can be turned on by central policy, never off (gate/central_policy.hpp).
  snap.ask_ms = gate::effective_ask_ms(s.ask_ms.value_or(ask_default_ms_), effective_);
  // The next of this turn's grants to expire, for the publication that ends it.
  const int64_t now = base::now_ms();
  std::optional<int64_t> next;
  for (const auto& g : snap.grants) {
    if (g.turn == snap.turn && g.expires_ms && *g.expires_ms > now) {
      next = next ? std::min(*next, *g.expires_ms) : *g.expires_ms;
    }
  }
  gate_.publish(std::move(snap));
  expiry_.at(next);
}

void Service::grants_expired() {
  auto lock = lock_service();
  const int64_t now = base::now_ms();
  json ids = json::array();
  for (const auto& g : state_.grants) {
    // Those the previous publication still had in force.
    if (g.turn == state_.turn_index && g.expires_ms && *g.expires_ms <= now &&
        *g.expires_ms > last_expiry_ms_) {
      ids.push_back(g.id);
    }
  }
  last_expiry_ms_ = now;
  publish_snapshot(state_);
  write_status();
  if (!ids.empty()) {
    spdlog::info("{} grant(s) expired", ids.size());
    emit({{"type", "grant_expired"}, {"grant_ids", ids}});
  }
}

void Service::require_readable_state() const {
  if (!state_error_.empty()) {
    throw Error(Errc::kStateCorrupt, state_error_ + ". " + kStateRepairHint);
  }
}

void Service::write_status() {
  // Rendered by status.md's writer, from copies of what it shows as of now.
  try {
    status_file_.publish([state = state_, refusals = refusals_, now_ms = base::now_ms(),
                          disk_full = reserve_ && reserve_->full(), error = state_error_,
                          heads_note = heads_note_, fleet = fleet_] {
      std::string text = render_status_md(state, *refusals, now_ms, disk_full, heads_note,
                                          fleet ? &*fleet : nullptr);
      if (!error.empty()) {
        text =
            "# STATE UNREADABLE: the tree is read-only for everyone\n\nError: " + md_quote(error) +
            "\n\n" + kStateRepairHint + "\n\n" + text;
      }
      return text;
    });
  } catch (const std::exception& e) {
    spdlog::warn("cannot update status.md: {}", e.what());
  }
}

void Service::set_heads_note(std::string note) {
  auto lock = lock_service();
  if (note == heads_note_) return;
  heads_note_ = std::move(note);
  write_status();
}

void Service::flush_status() {
  status_file_.flush();
}

void Service::commit(gate::TaskState next, Durability durability,
                     const std::function<void()>& before_effect) {
  require_readable_state();
  // Asks belong to one turn of one task in progress (gate/ask.hpp).
  if (!asks_.empty()) {
    if (next.task_id != state_.task_id) {
      end_asks("another task took over");
    } else if (next.turn_index != state_.turn_index) {
      end_asks("the turn moved on");
    } else if (next.status != gate::TaskStatus::kInProgress) {
      end_asks("the task is " + std::string(to_string(next.status)));
    }
  }
  next.updated_ms = base::now_ms();
  uint64_t ticket = 0;
  try {
    ticket = store_.append(next, durability == Durability::kBeforeReply
                                     ? state::StateLog::Sync::kNow
                                     : state::StateLog::Sync::kGathered);
  } catch (const base::WouldBlock&) {
    throw;  // nothing was written: a worker does it all again
  } catch (...) {
    // Fail closed: a state that cannot be saved keeps no lease.
    state_.grants.clear();
    publish_snapshot(state_);
    write_status();
    throw;
  }
  if (before_effect) {
    // The record is written and its fdatasync under way; what must precede the
    // effect (the ledger's own commit) overlaps it.
    try {
      before_effect();
    } catch (...) {
      // `next` never takes effect. The log's last record says otherwise until the
      // current state is written again; a restart would revoke its lease anyway (I3).
      try {
        store_.append(state_);
      } catch (const std::exception& e) {
        spdlog::warn("state.log: the state before a refused change not written again: {}",
                     e.what());
      }
      throw;
    }
  }
  // What takes permission away needs no wait: a restart revokes every lease
  // anyway (I3). Nor does a grant, whose durable record is the ledger's commit
  // (issue_grant). Everything else is answered once it is on disk.
  if (durability == Durability::kBeforeReply) tls_durable_ticket = ticket;
  publish_snapshot(next);
  const bool new_task = next.task_id != state_.task_id;
  state_ = std::move(next);
  if (new_task) reload_pending();
  write_status();
}

void Service::await_durable() {
  const uint64_t ticket = std::exchange(tls_durable_ticket, 0);
  if (ticket == 0) return;
  try {
    store_.wait_durable(ticket);
  } catch (...) {
    // The disk may not hold what was answered in memory: fail closed, as a save
    // that failed outright does.
    auto lock = lock_service();
    spdlog::error("the task state could not be made durable; every lease is revoked");
    state_.grants.clear();
    publish_snapshot(state_);
    write_status();
    throw;
  }
}

void Service::emit(json event) {
  events_.publish(std::move(event));
}

StatusReport Service::status() {
  auto lock = lock_service();
  StatusReport out;
  const int64_t now = base::now_ms();
  for (const auto& g : state_.grants) {
    if (g.turn == state_.turn_index && !(g.expires_ms && now >= *g.expires_ms)) {
      out.grants.push_back(g);
    }
  }
  for (const auto& r : pending_requests()) {
    if (r.turn != static_cast<int64_t>(state_.turn_index)) continue;
    // Filed by ask mode (an operation may wait on it: ask.waiting counts those).
    const bool ask = asks_.count(r.id) > 0;
    out.pending_requests.push_back({r, ask});
  }
  out.task = state_;
  out.turn = state_.turn_index;
  out.pending_checkpoint = store_.has_pending_checkpoint();
  out.memory_records = memory_.count();
  out.recent_refusals = *refusals_;
  out.refusals_total = refusals_total_;
  if (file_plane_status_) out.file_plane = file_plane_status_();
  if (heads_status_) out.signed_heads = heads_status_();
  if (reserve_) out.disk = reserve_->status();
  out.protected_paths.push_back(".longrun/**");
  for (auto& glob : gate_.protected_globs()) out.protected_paths.push_back(std::move(glob));
  out.ask = ask_status();
  out.foreign_mounts = foreign_mounts_;
  out.fleet = fleet_;
  out.policy = policy_json(now);
  if (!state_error_.empty()) {
    out.state_error = state_error_;
    out.repair = kStateRepairHint;
  }
  return out;
}

void Service::note_refusals(const std::vector<json>& refusals, uint64_t extra) {
  if (refusals.empty() && extra == 0) return;
  refusal_feed_.note(refusals);
  auto lock = lock_service();
  refusals_total_ += extra;
  // A new list, not a change of the one a published status.md text holds.
  auto recent = std::make_shared<std::vector<json>>(*refusals_);
  for (const json& refusal : refusals) {
    recent->push_back(refusal);
    const json count = refusal.value("count", json(1));
    refusals_total_ += count.is_number_unsigned() ? count.get<uint64_t>() : 1;
  }
  if (recent->size() > kRecentRefusals) {
    recent->erase(recent->begin(),
                  recent->begin() + static_cast<std::ptrdiff_t>(recent->size() - kRecentRefusals));
  }
  refusals_ = std::move(recent);
  write_status();
}

}  // namespace leasefs::service

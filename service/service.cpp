#include "service/service.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>
#include <utility>

#include "base/error.hpp"
#include "base/failpoint.hpp"
#include "gate/process_command.hpp"
#include "memory/keywords.hpp"
#include "memory/ledger_error.hpp"
#include "memory/memory_error.hpp"
#include "service/checkpoint_text.hpp"
#include "service/md_quote.hpp"
#include "service/service_support.hpp"
#include "service/status_report.hpp"

namespace leasefs::service {

using nlohmann::json;

namespace {

constexpr size_t kRecentRefusals = 10;

// The state log's ticket of this thread's last commit that must be durable before
// its reply (Service::await_durable).
thread_local uint64_t tls_durable_ticket = 0;
constexpr size_t kStartMemories = 5;
constexpr int64_t kMaxTtlMs = int64_t{30} * 24 * 3600 * 1000;
constexpr size_t kMaxPendingRequestsPerUid = 16;
constexpr const char* kStateRepairHint =
    "To repair: stop the daemon (leasefs unmount ROOT), fix or move aside "
    "ROOT/.longrun/state.json (the last checkpoint is in memory; without the file the task is "
    "recovered from it), then mount again";

std::string new_task_id(int64_t now) {
  const time_t secs = static_cast<time_t>(now / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char date[32];
  strftime(date, sizeof date, "%Y%m%d_%H%M%S", &tm);
  std::random_device rd;
  char suffix[8];
  snprintf(suffix, sizeof suffix, "%04x", static_cast<unsigned>(rd() & 0xffff));
  return std::string("T_") + date + "_" + suffix;
}

std::string padded(const char* prefix, uint64_t n) {
  char buf[32];
  snprintf(buf, sizeof buf, "%s%04llu", prefix, static_cast<unsigned long long>(n));
  return buf;
}

void require_task(const gate::TaskState& s) {
  if (!s.has_task()) {
    throw Error(Errc::kNoTask, "no task: start one with `leasectl start \"DESCRIPTION\"`");
  }
}

void require_in_progress(const gate::TaskState& s, const char* what) {
  require_task(s);
  if (s.status != gate::TaskStatus::kInProgress) {
    throw Error(
        Errc::kNotInProgress,
        std::string("cannot ") + what + ": task " + s.task_id + " is " +
            std::string(to_string(s.status)) +
            (gate::is_terminal(s.status) ? "; start a new task" : "; run `leasectl resume` first"));
  }
}

void set_status(gate::TaskState& s, gate::TaskStatus to, const std::string& reason, int64_t now) {
  if (s.status == to) return;
  gate::check_transition(s.status, to);
  s.history.push_back({s.status, to, reason, now});
  s.status = to;
  // Any transition out of in_progress ends the lease (I3).
  if (to != gate::TaskStatus::kInProgress) s.grants.clear();
}

// Globs are relative to the root; accept an absolute path inside the root too.
std::vector<std::string> normalize_paths(const std::vector<std::string>& paths,
                                         const std::string& root) {
  std::vector<std::string> out;
  for (std::string p : paths) {
    if (p.empty()) throw Error(Errc::kInvalidArgument, "an empty --path matches nothing");
    if (p.starts_with(root + "/")) p = p.substr(root.size() + 1);
    while (p.starts_with("./")) p = p.substr(2);
    if (p.starts_with("/")) {
      throw Error(Errc::kInvalidArgument,
                  "path " + p + " is outside the root " + root + "; use a path relative to it");
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

}  // namespace

Service::Service(StateStore& store, memory::MemoryStore& memory, memory::Ledger* ledger,
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
  snap.ask_ms = s.ask_ms.value_or(ask_default_ms_);
  gate_.publish(std::move(snap));
}

void Service::require_readable_state() const {
  if (!state_error_.empty()) {
    throw Error(Errc::kStateCorrupt, state_error_ + ". " + kStateRepairHint);
  }
}

void Service::write_status() {
  try {
    std::string text =
        render_status_md(state_, refusals_, base::now_ms(), reserve_ && reserve_->full());
    if (!state_error_.empty()) {
      text = "# STATE UNREADABLE: the tree is read-only for everyone\n\nError: " +
             md_quote(state_error_) + "\n\n" + kStateRepairHint + "\n\n" + text;
    }
    status_file_.publish(std::move(text));
  } catch (const std::exception& e) {
    spdlog::warn("cannot update status.md: {}", e.what());
  }
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
    ticket =
        store_.append(next, durability == Durability::kBeforeReply ? StateLog::Sync::kNow
                                                                   : StateLog::Sync::kGathered);
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
    const bool ask = asks_.count(r.id) > 0;  // an operation is parked on it
    out.pending_requests.push_back({r, ask});
  }
  out.task = state_;
  out.turn = state_.turn_index;
  out.pending_checkpoint = store_.has_pending_checkpoint();
  out.memory_records = memory_.count();
  out.recent_refusals = refusals_;
  out.refusals_total = refusals_total_;
  if (file_plane_status_) out.file_plane = file_plane_status_();
  if (reserve_) out.disk = reserve_->status();
  out.protected_paths.push_back(".longrun/**");
  for (auto& glob : gate_.protected_globs()) out.protected_paths.push_back(std::move(glob));
  out.ask = ask_status();
  out.foreign_mounts = foreign_mounts_;
  if (!state_error_.empty()) {
    out.state_error = state_error_;
    out.repair = kStateRepairHint;
  }
  return out;
}

StartResult Service::start(const StartArgs& args, const gate::Actor& actor) {
  auto lock = lock_service();
  if (args.description.empty()) {
    throw Error(Errc::kInvalidArgument, "a task needs a description");
  }
  // I1: what memory knows comes before anything is created.
  std::string query = args.description;
  for (const auto& k : args.keywords) query += " " + k;
  auto hits = memory_.search(query, kStartMemories);

  if (state_.has_task() && !gate::is_terminal(state_.status)) {
    throw Error(Errc::kTaskExists, "task " + state_.task_id + " (" + state_.description + ") is " +
                                       std::string(to_string(state_.status)) +
                                       "; finish it (`leasectl transition completed` or "
                                       "`failed`) before starting another");
  }
  const int64_t now = base::now_ms();
  gate::TaskState next;
  next.turn_index = state_.turn_index;
  next.grant_seq = state_.grant_seq;
  next.checkpoint_seq = state_.checkpoint_seq;
  next.task_id = new_task_id(now);
  next.description = args.description;
  next.done_when = args.done_when;
  next.keywords = memory::extract_keywords(args.description);
  for (const auto& k : args.keywords) {
    if (std::find(next.keywords.begin(), next.keywords.end(), k) == next.keywords.end()) {
      next.keywords.push_back(k);
    }
  }
  next.created_ms = now;
  set_status(next, gate::TaskStatus::kInProgress, "started by uid " + std::to_string(actor.uid),
             now);
  refusals_.clear();  // an earlier task's refusals are not this one's
  refusals_total_ = 0;
  commit(std::move(next));
  spdlog::info("task {} started: {}", state_.task_id, state_.description);
  emit({{"type", "start"},
        {"task_id", state_.task_id},
        {"description", state_.description},
        {"uid", actor.uid}});
  return {state_, std::move(hits)};
}

TurnResult Service::turn(const gate::Actor& actor) {
  auto lock = lock_service();
  gate::TaskState next = state_;
  const size_t revoked = next.grants.size();
  next.turn_index += 1;
  next.grants.clear();
  commit(std::move(next), Durability::kAfterReply);
  spdlog::info("turn {} (revoked {} grant(s))", state_.turn_index, revoked);
  emit({{"type", "turn"}, {"turn", state_.turn_index}, {"revoked", revoked}, {"uid", actor.uid}});
  return {state_.turn_index, revoked};
}

TurnResult Service::end_turn(const gate::Actor& actor) {
  auto lock = lock_service();
  end_asks("the turn ended");
  gate::TaskState next = state_;
  const size_t revoked = next.grants.size();
  next.grants.clear();
  commit(std::move(next), Durability::kAfterReply);
  spdlog::info("end of turn {} (revoked {} grant(s))", state_.turn_index, revoked);
  emit({{"type", "end-turn"},
        {"turn", state_.turn_index},
        {"revoked", revoked},
        {"uid", actor.uid}});
  return {state_.turn_index, revoked};
}

GrantResult Service::grant(const GrantArgs& args, const gate::Actor& actor) {
  auto lock = lock_service();
  require_approver(actor, "grant a lease");
  require_in_progress(state_, "grant");
  require_no_foreign_mount();
  if (args.reason.empty()) {
    throw Error(Errc::kInvalidArgument, "a grant needs a reason, in the approver's own words");
  }
  if (args.ttl_ms && (*args.ttl_ms <= 0 || *args.ttl_ms > kMaxTtlMs)) {
    throw Error(Errc::kInvalidArgument,
                "ttl must be positive and at most 30 days; a lease ends with its turn anyway");
  }
  if (args.ops == 0) throw Error(Errc::kInvalidArgument, "a grant must allow some op class");
  gate::TaskState next = state_;
  gate::Grant g;
  g.id = padded("G_", ++next.grant_seq);
  g.turn = next.turn_index;
  g.reason = args.reason;
  g.approver_uid = actor.uid;
  g.paths = normalize_paths(args.paths, store_.dir().root());
  g.ops = args.ops;
  g.issued_ms = base::now_ms();
  if (args.ttl_ms) g.expires_ms = g.issued_ms + *args.ttl_ms;
  issue_grant(std::move(next), g, args.ttl_ms.value_or(0));
  spdlog::info("grant {} for turn {} by uid {}: {}", g.id, g.turn, actor.uid, g.reason);
  emit({{"type", "grant"}, {"grant", to_json(g)}, {"uid", actor.uid}});
  return {g, state_.turn_index};
}

RevokeResult Service::revoke(const std::optional<std::string>& grant_id, const gate::Actor& actor) {
  auto lock = lock_service();
  gate::TaskState next = state_;
  size_t revoked = 0;
  if (grant_id) {
    revoked = std::erase_if(next.grants, [&](const gate::Grant& g) { return g.id == *grant_id; });
    if (revoked == 0) {
      throw Error(Errc::kNotFound,
                  "no grant " + *grant_id + " in force; `leasectl status` lists them");
    }
  } else {
    revoked = next.grants.size();
    next.grants.clear();
  }
  commit(std::move(next), Durability::kAfterReply);
  if (ledger_ && revoked > 0) {
    try {
      ledger_->record_revoke({grant_id.value_or(""), state_.task_id,
                              static_cast<int64_t>(state_.turn_index), actor.uid, "revoked"});
    } catch (const std::exception& e) {
      spdlog::error("ledger: revoke not recorded: {}", e.what());  // the revoke stands
    }
  }
  spdlog::info("revoked {} grant(s)", revoked);
  emit({{"type", "revoke"},
        {"grant_id", grant_id ? json(*grant_id) : json(nullptr)},
        {"revoked", revoked},
        {"uid", actor.uid}});
  return {revoked, !state_.grants.empty()};
}

// What gives permission is recorded before it takes effect: a grant the ledger
// cannot record is refused (memory_error), and never in force. What takes permission away (revoke,
// turn) takes effect first and is recorded after, so a ledger failure can never
// keep a lease alive.
//
// The state record is written first and the ledger commits second; the lease
// takes effect once the ledger holds it. The ledger's commit, synced by SQLite, is
// the grant's durable record, and the reply waits for nothing more: the state
// record only keeps the lease, which a restart revokes anyway (I3), so the state
// log's syncer gathers it as it does a revocation's. Without a ledger the state
// record is all there is, and the reply waits for its sync.
void Service::issue_grant(gate::TaskState next, const gate::Grant& g, int64_t ttl_ms) {
  next.grants.push_back(g);
  memory::GrantRecord record{g.id,       next.task_id, static_cast<int64_t>(g.turn), g.approver_uid,
                             g.reason,   g.paths,      gate::op_class_names(g.ops),  ttl_ms,
                             g.issued_ms};
  commit(std::move(next), ledger_ ? Durability::kAfterReply : Durability::kBeforeReply, [&] {
    if (ledger_) ledger_->record_grant(record);
    base::failpoint("grant.after_ledger");
  });
}

memory::Ledger& Service::ledger() {
  if (!ledger_) throw Error(Errc::kMemoryError, "this daemon has no ledger");
  return *ledger_;
}

void Service::reload_pending() noexcept {
  pending_.reset();
  if (!ledger_ || !state_.has_task()) return;
  try {
    pending_ = ledger_->pending_requests(state_.task_id);
    pending_task_ = state_.task_id;
  } catch (const std::exception& e) {
    spdlog::warn("ledger: pending requests not read: {}", e.what());  // status tries again
  }
}

const std::vector<memory::Request>& Service::pending_requests() {
  static const std::vector<memory::Request> kNone;
  if (!ledger_ || !state_.has_task()) return kNone;
  if (!pending_ || pending_task_ != state_.task_id) {
    base::would_block_here();  // a query: not on a thread that must not wait
    pending_ = ledger_->pending_requests(state_.task_id);
    pending_task_ = state_.task_id;
  }
  return *pending_;
}

RequestResult Service::request(const RequestArgs& args, const gate::Actor& actor) {
  auto lock = lock_service();
  require_readable_state();
  // Refused now rather than accepted and then refused at approval (and stale
  // after a resume): the asker learns why and what to do, once.
  require_in_progress(state_, "ask for a lease");
  if (args.reason.empty()) {
    throw Error(Errc::kInvalidArgument, "say what you will change and why (--reason)");
  }
  // A budget per uid, so that no agent can bury an approver's list.
  if (!actor.approver) {
    size_t mine = 0;
    for (const auto& p : pending_requests()) {
      if (p.requester_uid == actor.uid) ++mine;
    }
    if (mine >= kMaxPendingRequestsPerUid) {
      throw Error(Errc::kBusy, "uid " + std::to_string(actor.uid) + " already has " +
                                   std::to_string(mine) +
                                   " pending requests; wait for an answer before asking again");
    }
  }
  auto paths = normalize_paths(args.paths, store_.dir().root());
  const std::string command = gate::process_command(actor.pid);
  auto r = change_requests([&](memory::Ledger& l) {
    return l.create_request(state_.task_id, static_cast<int64_t>(state_.turn_index), args.reason,
                            paths, actor.uid, actor.pid, command);
  });
  spdlog::info("request {} by uid {} pid {}: {}", r.id, actor.uid, actor.pid, r.reason);
  emit({{"type", "request"},
        {"request", request_json(r)},
        {"uid", actor.uid},
        {"pid", actor.pid},
        {"command", command}});
  return {std::move(r)};
}

namespace {

[[noreturn]] void rethrow_ledger(const memory::LedgerError& e) {
  throw Error(e.errc(), e.what());
}

}  // namespace

ApproveResult Service::approve(const std::string& request_id, const std::string& reason,
                               const gate::Actor& actor) {
  auto lock = lock_service();
  require_approver(actor, "approve a request");
  require_readable_state();
  // Check first, so that an approval never gets consumed without becoming a lease.
  require_in_progress(state_, "approve");
  require_no_foreign_mount();
  memory::DecisionOutcome outcome;
  try {
    outcome = change_requests([&](memory::Ledger& l) {
      return l.decide(request_id, memory::Decision::approve, state_.task_id,
                      static_cast<int64_t>(state_.turn_index), actor.uid, reason);
    });
  } catch (const memory::LedgerError& e) {
    rethrow_ledger(e);
  }
  const auto& r = outcome.request;
  gate::TaskState next = state_;
  gate::Grant g;
  g.id = padded("G_", ++next.grant_seq);
  g.turn = next.turn_index;
  g.reason = reason.empty() ? "approved " + r.id + ": " + r.reason : reason;
  g.approver_uid = actor.uid;
  g.paths = r.paths;
  g.issued_ms = base::now_ms();
  g.request_id = r.id;
  issue_grant(std::move(next), g, 0);
  spdlog::info("request {} approved by uid {} as grant {}", r.id, actor.uid, g.id);
  answer_ask(r.id, true);  // published: the parked operation now runs under the grant
  emit({{"type", "decision"},
        {"decision", "approve"},
        {"request_id", r.id},
        {"grant_id", g.id},
        {"uid", actor.uid},
        {"reason", reason}});
  return {r, g};
}

RejectResult Service::reject(const std::string& request_id, const std::string& reason,
                             const gate::Actor& actor) {
  auto lock = lock_service();
  require_approver(actor, "reject a request");
  require_readable_state();
  memory::DecisionOutcome outcome;
  try {
    outcome = change_requests([&](memory::Ledger& l) {
      return l.decide(request_id, memory::Decision::reject, state_.task_id,
                      static_cast<int64_t>(state_.turn_index), actor.uid, reason);
    });
  } catch (const memory::LedgerError& e) {
    rethrow_ledger(e);
  }
  spdlog::info("request {} rejected by uid {}", request_id, actor.uid);
  answer_ask(request_id, false);
  emit({{"type", "decision"},
        {"decision", "reject"},
        {"request_id", request_id},
        {"uid", actor.uid},
        {"reason", reason}});
  return {std::move(outcome.request)};
}

// A checkpoint is a write-ahead record: pending_checkpoint.json first, then memory,
// then state.json, then the pending file goes and the text is returned (I2). A crash
// or failure anywhere leaves the old state and the pending file; replaying it saves
// the same checkpoint id again, which memory treats as the same record.
CheckpointResult Service::checkpoint(const CheckpointArgs& args, const gate::Actor& actor) {
  auto lock = lock_service();
  require_readable_state();
  auto pending = store_.load_pending_checkpoint();
  if (args.retry_pending) {
    if (!pending) {
      throw Error(Errc::kNoPendingCheckpoint, "there is no pending checkpoint to retry");
    }
    return replay_pending(*pending, actor);
  }
  if (pending) {
    // A new checkpoint would take the pending one's id and hide it.
    throw Error(Errc::kPendingCheckpoint,
                "checkpoint " + pending->checkpoint_id +
                    " is not saved yet; run `leasectl checkpoint --retry-pending` first");
  }
  require_in_progress(state_, "checkpoint");
  if (args.summary.empty() || args.next.empty()) {
    throw Error(Errc::kInvalidArgument, "a checkpoint needs --summary and --next");
  }
  const gate::TaskStatus target = args.status.value_or(gate::TaskStatus::kPaused);
  if (target != gate::TaskStatus::kPaused && target != gate::TaskStatus::kBlocked &&
      target != gate::TaskStatus::kWaitingVerification) {
    throw Error(Errc::kInvalidArgument,
                "a checkpoint stops as paused, blocked or waiting_verification, not " +
                    std::string(to_string(target)));
  }
  // The live lease ends now, whatever happens next.
  state_.grants.clear();
  publish_snapshot(state_);

  PendingCheckpoint p;
  p.state = state_;
  gate::TaskState& next = p.state;
  next.checkpoint_seq += 1;
  next.last_checkpoint_id = padded("C_", next.checkpoint_seq);
  if (!args.current_step.empty()) next.current_step = args.current_step;
  next.next_step = args.next;
  set_status(next, target, "checkpoint " + next.last_checkpoint_id, base::now_ms());
  p.checkpoint_id = next.last_checkpoint_id;
  p.title = "Checkpoint " + p.checkpoint_id + ": " + first_line(args.summary);
  p.keywords = next.keywords;
  p.text =
      render_checkpoint(next, {args.summary, args.verified, args.discarded, args.needs_approval});
  store_.save_pending_checkpoint(p);
  return replay_pending(p, actor);
}

CheckpointResult Service::replay_pending(const PendingCheckpoint& p, const gate::Actor& actor) {
  const std::string& id = p.checkpoint_id;
  if (p.state.task_id != state_.task_id) {
    throw Error(Errc::kStateCorrupt, "the pending checkpoint " + id + " belongs to task " +
                                         p.state.task_id + ", not the current task " +
                                         state_.task_id +
                                         "; move .longrun/pending_checkpoint.json aside");
  }
  // A replay must never reopen writes.
  state_.grants.clear();
  publish_snapshot(state_);
  memory::Record record;
  try {
    if (base::failpoint_armed("memory.save")) throw memory::MemoryError("failpoint memory.save");
    record = memory_.save({"checkpoint", p.title, p.text, p.keywords, p.state.task_id, id});
  } catch (const std::exception& e) {
    spdlog::error("checkpoint {} not saved to memory: {}", id, e.what());
    write_status();
    emit({{"type", "checkpoint_failed"}, {"checkpoint_id", id}, {"error", e.what()}});
    throw Error(Errc::kCheckpointWriteFailed,
                "checkpoint " + id + " was not saved to memory (" + e.what() +
                    "). Nothing was printed as saved; the lease is revoked and the checkpoint "
                    "is kept in .longrun/pending_checkpoint.json. Fix the cause, then run "
                    "`leasectl checkpoint --retry-pending`.");
  }
  base::failpoint("checkpoint.after_memory");

  // Apply what the checkpoint changes to the state as it is now (turns may have
  // passed since a failed attempt).
  gate::TaskState next = state_;
  next.checkpoint_seq = std::max(next.checkpoint_seq, p.state.checkpoint_seq);
  next.last_checkpoint_id = id;
  next.current_step = p.state.current_step;
  next.next_step = p.state.next_step;
  if (gate::can_transition(next.status, p.state.status)) {
    set_status(next, p.state.status, "checkpoint " + id, base::now_ms());
  } else if (next.status != p.state.status) {
    // The task moved on meanwhile (e.g. to waiting_verification): keep where it is
    // rather than leave a checkpoint that can never be replayed.
    spdlog::warn("checkpoint {}: task is {} now; keeping that status", id, to_string(next.status));
  }
  next.grants.clear();
  commit(std::move(next));
  store_.clear_pending_checkpoint();
  spdlog::info("checkpoint {} saved as {}", id, record.id);
  emit({{"type", "checkpoint"},
        {"checkpoint_id", id},
        {"record_id", record.id},
        {"status", to_string(state_.status)},
        {"uid", actor.uid}});
  return {id, record.id, state_.status, p.text};
}

ResumeResult Service::resume(const std::optional<std::string>& task_id, const gate::Actor& actor) {
  auto lock = lock_service();
  require_readable_state();
  // A pending checkpoint belongs to the current task: finish it before anything else.
  if (auto pending = store_.load_pending_checkpoint()) replay_pending(*pending, actor);

  gate::TaskState next = state_;
  if (task_id && *task_id != state_.task_id) {
    // Whether the task exists comes first: "checkpoint the current task" is no
    // advice for a task id that names nothing.
    auto record = memory_.newest("checkpoint", *task_id);
    if (!record) {
      throw Error(Errc::kNotFound,
                  "no task " + *task_id + " to resume: it has no checkpoint in this root's memory" +
                      (state_.has_task() ? " (the current task is " + state_.task_id +
                                               "; `leasectl resume` resumes it)"
                                         : std::string()) +
                      "; `leasectl memory search WORDS` finds other tasks");
    }
    if (state_.has_task() && state_.status == gate::TaskStatus::kInProgress) {
      throw Error(
          Errc::kTaskExists,
          "task " + state_.task_id + " is in_progress; checkpoint it before resuming " + *task_id);
    }
    next = task_from_checkpoint(*record);
  }
  require_task(next);
  if (gate::is_terminal(next.status)) {
    throw Error(Errc::kInvalidTransition, "task " + next.task_id + " is " +
                                              std::string(to_string(next.status)) +
                                              "; a finished task is not resumed, start a new one");
  }
  next.turn_index = std::max(next.turn_index, state_.turn_index) + 1;
  next.grants.clear();
  set_status(next, gate::TaskStatus::kInProgress, "resumed by uid " + std::to_string(actor.uid),
             base::now_ms());
  commit(std::move(next));

  std::optional<ResumedCheckpoint> checkpoint;
  if (!state_.last_checkpoint_id.empty()) {
    if (auto rec = memory_.find_by_ref(state_.last_checkpoint_id)) {
      checkpoint = ResumedCheckpoint{state_.last_checkpoint_id, rec->id, rec->content};
    }
  }
  std::string query = state_.description;
  for (const auto& k : state_.keywords) query += " " + k;
  auto hits = memory_.search(query, kStartMemories);
  spdlog::info("task {} resumed in turn {}", state_.task_id, state_.turn_index);
  emit({{"type", "resume"},
        {"task_id", state_.task_id},
        {"turn", state_.turn_index},
        {"uid", actor.uid}});
  return {state_, state_.turn_index, std::move(checkpoint), std::move(hits)};
}

TransitionResult Service::transition(gate::TaskStatus to, const std::string& reason,
                                     const gate::Actor& actor) {
  auto lock = lock_service();
  require_task(state_);
  if (to == gate::TaskStatus::kCompleted) require_approver(actor, "mark a task completed");
  gate::TaskState next = state_;
  const gate::TaskStatus from = next.status;
  set_status(next, to, reason.empty() ? "by uid " + std::to_string(actor.uid) : reason,
             base::now_ms());
  if (gate::is_terminal(to) && !memory_.find_by_ref(task_end_ref(next.task_id))) {
    // Memory learns that the task ended, so that its checkpoints never bring it back.
    // (Already there when an earlier attempt saved it but could not commit.)
    memory_.save(
        {"task_end",
         "Task " + next.task_id + " " + std::string(to_string(to)) + ": " + next.description,
         render_task_end(next, reason), next.keywords, next.task_id, task_end_ref(next.task_id)});
  }
  commit(std::move(next));
  spdlog::info("task {}: {} -> {}", state_.task_id, to_string(from), to_string(to));
  emit({{"type", "transition"},
        {"task_id", state_.task_id},
        {"from", to_string(from)},
        {"to", to_string(to)},
        {"reason", reason},
        {"uid", actor.uid}});
  return {state_, from, to};
}

MemorySearchResult Service::memory_search(const std::string& query, size_t limit) {
  auto lock = lock_service();
  return {query, memory_.search(query, limit)};
}

MemorySaveResult Service::memory_save(const std::string& title, const std::string& content,
                                      const std::vector<std::string>& keywords,
                                      const gate::Actor& actor) {
  auto lock = lock_service();
  if (title.empty() || content.empty()) {
    throw Error(Errc::kInvalidArgument, "a memory needs --title and --content");
  }
  auto kw = keywords.empty() ? memory::extract_keywords(title + " " + content) : keywords;
  auto record = memory_.save({"note", title, content, kw, state_.task_id, ""});
  emit({{"type", "memory.save"}, {"record_id", record.id}, {"uid", actor.uid}});
  return {record.id, record.title};
}

// The task a checkpoint record describes, as a state to make current: from its
// marker line, with the task's end (if memory knows of one) taking precedence.
gate::TaskState Service::task_from_checkpoint(const memory::Record& record) {
  auto marker = parse_checkpoint_marker(record.content);
  if (!marker) {
    throw Error(Errc::kStateCorrupt, "checkpoint record " + record.id + " has no readable marker");
  }
  auto status = gate::parse_status(marker->value("status", ""));
  if (!status) {
    throw Error(Errc::kStateCorrupt, "checkpoint record " + record.id + " has no status");
  }
  gate::TaskState s;
  s.turn_index = std::max<uint64_t>(state_.turn_index, marker->value("turn", uint64_t{0}));
  s.grant_seq = state_.grant_seq;
  s.checkpoint_seq = state_.checkpoint_seq;
  s.task_id = marker->value("task_id", record.task_id);
  s.description = marker->value("description", record.title);
  s.done_when = marker->value("done_when", "");
  s.keywords = record.keywords;
  s.status = *status;
  s.current_step = marker->value("current_step", "");
  s.next_step = marker->value("next_step", "");
  s.last_checkpoint_id = marker->value("checkpoint_id", record.ref);
  s.created_ms = record.created_ms;
  // Checkpoint ids are C_<n>; never hand out one that exists.
  const std::string& id = s.last_checkpoint_id;
  if (id.starts_with("C_")) {
    s.checkpoint_seq =
        std::max<uint64_t>(s.checkpoint_seq, std::strtoull(id.c_str() + 2, nullptr, 10));
  }
  if (auto end = memory_.find_by_ref(task_end_ref(s.task_id))) {
    if (auto end_marker = parse_checkpoint_marker(end->content)) {
      if (auto ended = gate::parse_status(end_marker->value("status", ""))) s.status = *ended;
    }
  }
  return s;
}

void Service::recover_from_memory() {
  auto record = memory_.newest("checkpoint");
  if (!record) return;
  commit(task_from_checkpoint(*record));
  spdlog::warn("state.json was missing; task {} rebuilt from checkpoint {} ({})", state_.task_id,
               state_.last_checkpoint_id, record->id);
}

void Service::note_refusals(const std::vector<json>& refusals, uint64_t extra) {
  if (refusals.empty() && extra == 0) return;
  auto lock = lock_service();
  refusals_total_ += extra;
  for (const json& refusal : refusals) {
    refusals_.push_back(refusal);
    const json count = refusal.value("count", json(1));
    refusals_total_ += count.is_number_unsigned() ? count.get<uint64_t>() : 1;
  }
  if (refusals_.size() > kRecentRefusals) {
    refusals_.erase(refusals_.begin(), refusals_.begin() + static_cast<std::ptrdiff_t>(
                                                               refusals_.size() - kRecentRefusals));
  }
  write_status();
}

}  // namespace leasefs::service

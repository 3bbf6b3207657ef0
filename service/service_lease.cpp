// The lease's use cases: grant and revoke, and the requests an agent makes and an
// approver approves (as a grant) or rejects, kept in the ledger.
#include <spdlog/spdlog.h>

#include "base/error.hpp"
#include "base/failpoint.hpp"
#include "base/inert_text.hpp"
#include "gate/grant_glob.hpp"
#include "gate/process_command.hpp"
#include "memory/ledger_error.hpp"
#include "service/service.hpp"
#include "service/service_support.hpp"

namespace leasefs::service {

using nlohmann::json;

namespace {

constexpr int64_t kMaxTtlMs = int64_t{30} * 24 * 3600 * 1000;
constexpr size_t kMaxPendingRequestsPerUid = 16;

// Every grant and request is checked here, whoever sent it (leasectl, the MCP
// server, a raw socket line): a path refused names itself and why.
std::vector<std::string> normalize_paths(const std::vector<std::string>& paths,
                                         const std::string& root) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    gate::GrantGlob g = gate::normalize_grant_glob(p, root);
    if (!g.problem.empty()) {
      // Quoted: the path may be the agent's, with bytes a terminal acts on.
      throw Error(Errc::kInvalidArgument, "--path " + base::quote_name(p) + ": " + g.problem);
    }
    out.push_back(std::move(g.glob));
  }
  return out;
}

[[noreturn]] void rethrow_ledger(const memory::LedgerError& e) {
  throw Error(e.errc(), e.what());
}

}  // namespace

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
  // A central ttl_cap shortens it, never lengthens it (gate/central_policy.hpp).
  const std::optional<int64_t> ttl = gate::capped_ttl_ms(args.ttl_ms, effective_);
  if (ttl) g.expires_ms = g.issued_ms + *ttl;
  issue_grant(std::move(next), g, ttl.value_or(0));
  spdlog::info("grant {} for turn {} by uid {}: {}", g.id, g.turn, actor.uid, g.reason);
  emit({{"type", "grant"}, {"grant", to_json(g)}, {"uid", actor.uid}});
  return {g, state_.turn_index};
}

RevokeResult Service::revoke(const std::optional<std::string>& grant_id, const gate::Actor& actor) {
  auto lock = lock_service();
  gate::TaskState next = state_;
  std::vector<std::string> ids;  // what this revoke takes away
  for (const gate::Grant& g : next.grants) {
    if (!grant_id || g.id == *grant_id) ids.push_back(g.id);
  }
  if (grant_id && ids.empty()) {
    throw Error(Errc::kNotFound,
                "no grant " + *grant_id + " in force; `leasectl status` lists them");
  }
  std::erase_if(next.grants, [&](const gate::Grant& g) { return !grant_id || g.id == *grant_id; });
  const size_t revoked = ids.size();
  commit(std::move(next), Durability::kAfterReply);
  // One ledger entry per grant, so the ledger names each one a revoke of all ended.
  for (const std::string& id : ids) {
    if (!ledger_) break;
    try {
      ledger_->record_revoke(
          {id, state_.task_id, static_cast<int64_t>(state_.turn_index), actor.uid, "revoked"});
    } catch (const std::exception& e) {
      spdlog::error("ledger: revoke of {} not recorded: {}", id, e.what());  // the revoke stands
    }
  }
  spdlog::info("revoked {} grant(s)", revoked);
  emit({{"type", "revoke"},
        {"grant_id", grant_id ? json(*grant_id) : json(nullptr)},
        {"grant_ids", ids},
        {"revoked", revoked},
        {"uid", actor.uid}});
  return {revoked, !state_.grants.empty()};
}

// What gives permission is recorded before it takes effect: a grant the ledger
// cannot record is refused (memory_error), and never in force. What takes
// permission away takes effect first: a revoke (or a foreign mount) is recorded
// after it, a turn's end not at all, so a ledger failure can never keep a lease
// alive.
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
  RequestResult out{std::move(r), {}, {}};
  // Inside the turn it was asked in, under the lock: never across a turn.
  if (state_.task_id == out.request.task_id) auto_approve(out);
  return out;
}

ApproveResult Service::approve(const std::string& request_id, const std::string& reason,
                               const gate::Actor& actor, const std::string& source) {
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
  const std::optional<int64_t> ttl = gate::capped_ttl_ms(std::nullopt, effective_);
  if (ttl) g.expires_ms = g.issued_ms + *ttl;
  issue_grant(std::move(next), g, ttl.value_or(0));
  spdlog::info("request {} approved by uid {} as grant {}", r.id, actor.uid, g.id);
  answer_ask(r.id, true);  // published: the parked operation now runs under the grant
  emit({{"type", "decision"},
        {"decision", "approve"},
        {"request_id", r.id},
        {"grant_id", g.id},
        {"uid", actor.uid},
        {"source", source},
        {"reason", reason}});
  return {r, g};
}

RejectResult Service::reject(const std::string& request_id, const std::string& reason,
                             const gate::Actor& actor, const std::string& source) {
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
        {"source", source},
        {"reason", reason}});
  return {std::move(outcome.request)};
}

}  // namespace leasefs::service

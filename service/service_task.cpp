// The task's use cases: start, the turn and its end, checkpoint (and the replay
// of one left pending), resume and the transitions to a final status; and, when
// state.json is missing, the task rebuilt from memory's newest checkpoint.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

#include "base/error.hpp"
#include "base/failpoint.hpp"
#include "memory/keywords.hpp"
#include "memory/memory_error.hpp"
#include "service/checkpoint_text.hpp"
#include "service/service.hpp"
#include "service/service_support.hpp"

namespace leasefs::service {

namespace {

constexpr size_t kStartMemories = 5;

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

void set_status(gate::TaskState& s, gate::TaskStatus to, const std::string& reason, int64_t now) {
  if (s.status == to) return;
  gate::check_transition(s.status, to);
  s.history.push_back({s.status, to, reason, now});
  s.status = to;
  // Any transition out of in_progress ends the lease (I3).
  if (to != gate::TaskStatus::kInProgress) s.grants.clear();
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

}  // namespace

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
  refusals_ = std::make_shared<const std::vector<nlohmann::json>>();  // not an earlier task's
  refusals_total_ = 0;
  refusal_feed_.forget();
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

  state::PendingCheckpoint p;
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

CheckpointResult Service::replay_pending(const state::PendingCheckpoint& p,
                                         const gate::Actor& actor) {
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

}  // namespace leasefs::service

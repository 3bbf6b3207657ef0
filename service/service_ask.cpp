// Ask mode's use cases (gate/ask.hpp): a refused mutation becomes a request in
// the ledger on behalf of the process that made it; an approval or rejection of
// that request answers the parked operation; the end of the turn, a timeout or
// the process going away closes the request, so that a later approval cannot
// issue a grant that nobody waits for.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "base/duration_text.hpp"
#include "base/error.hpp"
#include "memory/ledger_error.hpp"
#include "service/service.hpp"
#include "service/service_support.hpp"

namespace leasefs::service {

using nlohmann::json;

namespace {

uint32_t daemon_uid() {
  return static_cast<uint32_t>(::geteuid());
}

}  // namespace

void Service::set_ask_channel(gate::AskChannel* channel, int64_t default_ms) {
  auto lock = lock_service();
  ask_channel_ = channel;
  ask_default_ms_ = default_ms;
  publish_snapshot(state_);
}

void Service::open_ask(const gate::Ask& ask) {
  auto lock = lock_service();
  const bool open = ledger_ && ask_channel_ && state_error_.empty() && state_.has_task() &&
                    state_.status == gate::TaskStatus::kInProgress && ask.turn == state_.turn_index;
  if (!open) {
    if (ask_channel_) ask_channel_->answer(ask.id, false);
    return;
  }
  // The grant an approval issues names exactly these: the paths literally (the
  // filesystem never asks for a name a glob would read as a pattern), and a moved
  // directory with everything beneath it.
  std::vector<std::string> paths = ask.paths;
  for (const std::string& tree : ask.trees) paths.push_back(tree + "/**");
  const std::string op(gate::op_name(ask.op));
  const std::string reason =
      ask.waits ? "ask mode: this " + op + " waits for a person"
                : "ask mode: this " + op + " was refused; approved, a retry goes through";
  const std::string& command = ask.command;
  try {
    auto r = change_requests([&](memory::Ledger& l) {
      return l.create_request(state_.task_id, static_cast<int64_t>(state_.turn_index), reason,
                              paths, ask.caller.uid, ask.caller.pid, command);
    });
    asks_[r.id] = ask.id;
    if (ask.waits) waited_asks_.insert(r.id);
    spdlog::info("request {} (ask mode): {} by uid {} pid {}", r.id, op, ask.caller.uid,
                 ask.caller.pid);
    json out = request_json(r);
    out["ask"] = {{"op", op}, {"timeout_ms", ask_ms_in_force()}};
    emit({{"type", "request"},
          {"request", out},
          {"uid", ask.caller.uid},
          {"pid", ask.caller.pid},
          {"command", command}});
    // A central auto_approve rule that covers the paths and the op answers it at once.
    RequestResult filed{std::move(r), {}, {}};
    auto_approve(filed, gate::op_class(ask.op));
    if (filed.auto_grant) answer_ask(filed.request.id, true);
  } catch (const std::exception& e) {
    spdlog::warn("ask mode: cannot record the request for a {}: {}", op, e.what());
    ask_channel_->answer(ask.id, false);
  }
}

void Service::close_ask(uint64_t ask_id, gate::AskEnd end) {
  auto lock = lock_service();
  for (auto it = asks_.begin(); it != asks_.end(); ++it) {
    if (it->second != ask_id) continue;
    const std::string request_id = it->first;
    asks_.erase(it);
    waited_asks_.erase(request_id);
    close_ask_request(request_id, std::string(to_string(end)));
    return;
  }
}

void Service::close_ask_request(const std::string& request_id, const std::string& why) {
  try {
    change_requests([&](memory::Ledger& l) {
      return l.decide(request_id, memory::Decision::reject, state_.task_id,
                      static_cast<int64_t>(state_.turn_index), daemon_uid(), "ask mode: " + why);
    });
  } catch (const std::exception& e) {
    // Already decided (an answer crossed the end of the wait) or of another turn.
    spdlog::debug("ask request {} already closed: {}", request_id, e.what());
  }
  emit({{"type", "ask_ended"}, {"request_id", request_id}, {"why", why}});
}

void Service::answer_ask(const std::string& request_id, bool approved) {
  auto it = asks_.find(request_id);
  if (it == asks_.end()) return;
  const uint64_t id = it->second;
  asks_.erase(it);
  waited_asks_.erase(request_id);
  if (ask_channel_) ask_channel_->answer(id, approved);
}

void Service::end_asks(const std::string& why) {
  // Each ask ends with a ledger write: not on a thread that must not wait.
  if (!asks_.empty()) base::would_block_here();
  for (const auto& [request_id, id] : asks_) {
    close_ask_request(request_id, why);
    if (ask_channel_) ask_channel_->answer(id, false);
  }
  asks_.clear();
  waited_asks_.clear();
}

AskStatus Service::ask_status() const {
  const int64_t ms = ask_ms_in_force();
  return {ms, ms > 0 && ask_channel_ != nullptr, state_.ask_ms.has_value(), waited_asks_.size()};
}

SetAskResult Service::set_ask(std::optional<int64_t> ms, const gate::Actor& actor) {
  auto lock = lock_service();
  require_approver(actor, "set ask mode");
  require_readable_state();
  if (!state_.has_task()) {
    throw Error(Errc::kNoTask, "no task: ask mode is set per task; start one first");
  }
  if (ms && (*ms < 0 || *ms > gate::kMaxAskMs)) {
    throw Error(Errc::kInvalidArgument,
                "ask mode waits 0 (off) to " + base::duration_text(gate::kMaxAskMs));
  }
  gate::TaskState next = state_;
  next.ask_ms = ms;
  commit(std::move(next));
  if (ask_ms_in_force() == 0) end_asks("turned off");
  const AskStatus ask = ask_status();
  emit({{"type", "ask"},
        {"ask",
         {{"timeout_ms", ask.timeout_ms},
          {"on", ask.on},
          {"set_by", ask.set_by_task ? "task" : "mount"},
          {"waiting", ask.waiting}}},
        {"uid", actor.uid}});
  return {ask};
}

}  // namespace leasefs::service

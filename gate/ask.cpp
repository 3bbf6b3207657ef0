#include "gate/ask.hpp"

#include "base/enum_names.hpp"
#include "base/json_text.hpp"

namespace leasefs::gate {

namespace {
constexpr base::EnumNames<AskEnd, 4> kEndNames{{
    {AskEnd::kTimedOut, "timed_out"},
    {AskEnd::kInterrupted, "interrupted"},
    {AskEnd::kEndOfTurn, "end_of_turn"},
    {AskEnd::kStopped, "stopped"},
}};
}  // namespace

std::string_view to_string(AskEnd end) noexcept {
  return base::enum_name(kEndNames, end);
}

bool may_ask(DenyReason reason, const std::vector<std::string>& paths) noexcept {
  switch (reason) {
    case DenyReason::kNoLease:
    case DenyReason::kStaleLease:
    case DenyReason::kExpired:
    case DenyReason::kOutOfScope:
    case DenyReason::kProtectedPath:  // a --protect glob; .longrun is caught below
      break;
    default:
      return false;
  }
  if (paths.empty()) return false;
  for (const std::string& p : paths) {
    if (p.empty() || p.size() >= kMaxPathLength || is_protected_path(p)) return false;
    if (p.front() == '/' || p.find_first_of("*?") != std::string::npos) return false;
    // A grant is JSON text: it could only name another path (or a glob of many).
    if (!base::is_utf8(p)) return false;
  }
  return true;
}

void AskChannel::attach_desk(AskDesk* desk) noexcept {
  std::lock_guard lock(mu_);
  desk_ = desk;
}

void AskChannel::attach_waiter(AskWaiter* waiter) noexcept {
  std::lock_guard lock(mu_);
  waiter_ = waiter;
}

bool AskChannel::ask(Ask ask) noexcept {
  std::lock_guard lock(mu_);
  if (!desk_) return false;
  desk_->on_ask(std::move(ask));
  return true;
}

void AskChannel::ended(uint64_t id, AskEnd end) noexcept {
  std::lock_guard lock(mu_);
  if (desk_) desk_->on_ask_ended(id, end);
}

void AskChannel::answer(uint64_t id, bool approved) noexcept {
  std::lock_guard lock(mu_);
  if (waiter_) waiter_->on_answer(id, approved);
}

}  // namespace leasefs::gate

#include "gate/gate.hpp"

#include <fcntl.h>

namespace leasefs::gate {

std::string process_name(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/comm";
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return "?";
  char buf[64];
  ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n <= 0) return "?";
  std::string name(buf, static_cast<size_t>(n));
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

Gate::Gate() : cell_(std::make_unique<const GateSnapshot>()) {}

Verdict Gate::check(Op op, std::string_view path, const Caller& caller) const noexcept {
  auto snap = cell_.read();
  Decision d = decide(*snap, op, path, caller, base::now_ms());
  Verdict v{d.allowed, d.reason, {}};
  if (d.grant) v.grant_id = d.grant->id;
  return v;
}

namespace {

Verdict verdict_of(EffectDecision&& d, Effect* refused) {
  Verdict v{d.decision.allowed, d.decision.reason, {}};
  if (d.decision.grant) v.grant_id = d.decision.grant->id;
  if (!v.allowed && refused) *refused = std::move(d.refused);
  return v;
}

}  // namespace

Verdict Gate::check_rename(const RenamePlan& plan, const Caller& caller, Effect* refused) const {
  auto snap = cell_.read();
  return verdict_of(decide_rename(*snap, plan, caller, now_ms()), refused);
}

Verdict Gate::check_link(std::string_view source, std::string_view name, const Caller& caller,
                         Effect* refused) const {
  auto snap = cell_.read();
  return verdict_of(decide_link(*snap, source, name, caller, now_ms()), refused);
}

namespace {

Verdict verdict_of(const Decision& d) {
  Verdict v{d.allowed, d.reason, {}};
  if (d.grant) v.grant_id = d.grant->id;
  return v;
}

}  // namespace

Verdict Gate::check_temp_sibling(std::string_view path, const Caller& caller,
                                 uint64_t* turn) const {
  auto snap = cell_.read();
  if (turn) *turn = snap->turn;
  return verdict_of(decide_temp_sibling(*snap, path, caller, now_ms()));
}

Verdict Gate::check_on_temp_sibling(Op op, uint64_t turn, const Caller& caller) const {
  auto snap = cell_.read();
  return verdict_of(decide_on_temp_sibling(*snap, op, turn, caller, now_ms()));
}

Verdict Gate::check_temp_sibling_rename(std::string_view from, std::string_view to, uint64_t turn,
                                        const Caller& caller) const {
  auto snap = cell_.read();
  return verdict_of(decide_temp_sibling_rename(*snap, from, to, turn, caller, now_ms()));
}

void Gate::set_publish_listener(PublishListener* listener) noexcept {
  std::lock_guard lock(listener_mu_);
  listener_ = listener;
}

bool Gate::needs_path() const noexcept {
  return cell_.read()->needs_path;
}

void Gate::set_protected_globs(std::vector<std::string> globs) {
  std::lock_guard lock(listener_mu_);
  protected_ = std::move(globs);
}

std::vector<std::string> Gate::protected_globs() const {
  std::lock_guard lock(listener_mu_);
  return protected_;
}

void Gate::publish(GateSnapshot snapshot) {
  std::lock_guard lock(listener_mu_);
  snapshot.protected_globs = protected_;
  snapshot.needs_path = false;
  for (const auto& g : snapshot.grants) {
    if (g.turn != snapshot.turn) continue;
    // Protected globs close paths a grant would otherwise open: its path counts.
    if (!g.paths.empty() || !snapshot.protected_globs.empty()) snapshot.needs_path = true;
  }
  if (listener_) listener_->on_publishing();
  cell_.publish(std::make_unique<const GateSnapshot>(std::move(snapshot)));
  if (listener_) {
    auto snap = cell_.read();
    listener_->on_published(*snap);
  }
}

void Gate::set_sink(GateEventSink* sink) noexcept {
  sink_.store(sink);
}

// Every refusal reaches the sink, which counts them (the audit must hold every
// count). The map here only keeps the process name of a (pid, op, path) for the
// coalescing window, so a storm of refusals does not read /proc for each.
void Gate::report_refusal(Op op, std::string_view path, const Caller& caller, DenyReason reason,
                          int64_t at_ms, uint64_t turn) noexcept {
  try {
    GateEventSink* sink = sink_.load();
    if (!sink) return;
    const int64_t now = base::now_ms();
    std::string process;
    {
      std::string key =
          std::to_string(caller.pid) + '/' + std::string(op_name(op)) + '/' + std::string(path);
      std::lock_guard lock(recent_mu_);
      // A storm of distinct refusals (a refused `rm -rf`) must not make every
      // refusal scan a huge map: sweep at most once per window, and past twice the
      // cap start over (only names are lost: they are read again).
      if (recent_.size() > kMaxRecent && now - last_sweep_ms_ >= kCoalesceWindowMs) {
        std::erase_if(
            recent_, [&](const auto& kv) { return now - kv.second.first_ms >= kCoalesceWindowMs; });
        last_sweep_ms_ = now;
      }
      if (recent_.size() > 2 * kMaxRecent) recent_.clear();
      auto it = recent_.find(key);
      if (it != recent_.end() && now - it->second.first_ms < kCoalesceWindowMs) {
        process = it->second.process;
      } else {
        process = process_name(caller.pid);
        recent_.insert_or_assign(std::move(key), RecentRefusal{now, process});
      }
    }
    sink->on_refusal(Refusal{op, std::string(path), caller, std::move(process), reason, 1,
                             at_ms > 0 ? at_ms : now, at_ms > 0 ? turn : snapshot()->turn});
  } catch (...) {
    // Reporting must never turn a refusal into a crash of the filesystem thread.
  }
}

void Gate::report_write_closed(WriteClosed closed) noexcept {
  if (GateEventSink* sink = sink_.load()) sink->on_write_closed(std::move(closed));
}

void Gate::report_allowed(Allowed allowed) noexcept {
  if (GateEventSink* sink = sink_.load()) sink->on_allowed(std::move(allowed));
}

}  // namespace leasefs::gate

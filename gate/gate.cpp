#include "gate/gate.hpp"

namespace leasefs::gate {

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

Verdict Gate::check_temp_sibling_rename(std::string_view from, std::string_view to, bool to_exists,
                                        uint64_t turn, const Caller& caller) const {
  auto snap = cell_.read();
  return verdict_of(decide_temp_sibling_rename(*snap, from, to, to_exists, turn, caller, now_ms()));
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

}  // namespace leasefs::gate

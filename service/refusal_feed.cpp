#include "service/refusal_feed.hpp"

#include <algorithm>

namespace leasefs::service {

using nlohmann::json;

namespace {

uint64_t turn_of(const json& refusal) {
  const json turn = refusal.value("turn", json());
  return turn.is_number_unsigned() ? turn.get<uint64_t>() : 0;
}

uint64_t seq_of(const json& refusal) {
  return refusal.value("seq", uint64_t{0});
}

}  // namespace

void RefusalFeed::note(const std::vector<json>& refusals) {
  std::lock_guard lock(mu_);
  for (const json& refusal : refusals) {
    json kept = refusal;
    kept.erase("type");
    kept["seq"] = ++seq_;
    kept_.push_back(std::move(kept));
  }
  while (kept_.size() > kKept) {
    ++dropped_[turn_of(kept_.front())];
    kept_.pop_front();
  }
  // Only turns still kept, or the last one dropped, are ever asked about.
  while (dropped_.size() > 4) dropped_.erase(dropped_.begin());
}

void RefusalFeed::mark(const std::string& call) {
  std::lock_guard lock(mu_);
  if (call.empty() || marks_.count(call) > 0) return;  // the first mark stands
  marks_[call] = Mark{seq_, false};
  mark_order_.push_back(call);
  while (mark_order_.size() > kMaxMarks) {
    marks_.erase(mark_order_.front());
    mark_order_.pop_front();
  }
}

RefusalFeed::Window RefusalFeed::take(const std::string& call, uint64_t turn) {
  std::lock_guard lock(mu_);
  if (call.empty()) return turn_window(turn);
  auto it = marks_.find(call);
  if (it == marks_.end()) {
    // Taken now, so that a mark made after this cannot narrow a later answer.
    marks_[call] = Mark{seq_, true};
    mark_order_.push_back(call);
    while (mark_order_.size() > kMaxMarks) {
      marks_.erase(mark_order_.front());
      mark_order_.pop_front();
    }
    return turn_window(turn);
  }
  if (it->second.taken) return turn_window(turn);
  it->second.taken = true;
  const uint64_t from = it->second.seq;
  std::vector<json> after;
  for (const json& r : kept_) {
    if (seq_of(r) > from) after.push_back(r);
  }
  // Noted after the mark but pushed out of what is kept since.
  const uint64_t first_kept = kept_.empty() ? seq_ + 1 : seq_of(kept_.front());
  const uint64_t lost = first_kept > from + 1 ? first_kept - from - 1 : 0;
  return shown(std::move(after), lost);
}

void RefusalFeed::forget() {
  std::lock_guard lock(mu_);
  kept_.clear();
  dropped_.clear();
}

RefusalFeed::Window RefusalFeed::turn_window(uint64_t turn) const {
  std::vector<json> of_turn;
  for (const json& r : kept_) {
    if (turn_of(r) == turn) of_turn.push_back(r);
  }
  auto dropped = dropped_.find(turn);
  Window w = shown(std::move(of_turn), dropped == dropped_.end() ? 0 : dropped->second);
  w.whole_turn = true;
  return w;
}

RefusalFeed::Window RefusalFeed::shown(std::vector<json> all, uint64_t left_out) const {
  Window w;
  if (all.size() > kShown) {
    left_out += all.size() - kShown;
    all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(kShown));
  }
  w.refusals = std::move(all);
  w.left_out = left_out;
  return w;
}

}  // namespace leasefs::service

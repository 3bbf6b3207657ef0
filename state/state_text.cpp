#include "state/state_text.hpp"

namespace leasefs::state {

base::JsonText StateText::of(const gate::TaskState& state) {
  ++generation_;
  base::ArrayText grants;
  for (const gate::Grant& g : state.grants) {
    auto kept = grants_.find(g.id);
    if (kept == grants_.end() || !(kept->second.grant == g)) {
      kept = grants_.insert_or_assign(g.id, Kept{g, base::JsonText(gate::to_json(g))}).first;
    }
    kept->second.generation = generation_;
    grants.push(kept->second.text);
  }
  std::erase_if(grants_,
                [this](const auto& kept) { return kept.second.generation != generation_; });
  return base::JsonText::with_member(gate::to_json_except_grants(state), "grants",
                                     base::JsonText(grants));
}

}  // namespace leasefs::state

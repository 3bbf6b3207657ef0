#include "gate/effect.hpp"

#include "gate/protected_paths.hpp"

namespace leasefs::gate {

namespace {

std::string join(std::string_view dir, std::string_view rel) {
  std::string out;
  out.reserve(dir.size() + 1 + rel.size());
  out += dir;
  if (!out.empty()) out += '/';
  out += rel;
  return out;
}

// Collects effects and stops at the first refusal.
class Judge {
 public:
  Judge(const GateSnapshot& snapshot, const Caller& caller, int64_t now_ms)
      : snapshot_(snapshot), caller_(caller), now_ms_(now_ms) {}

  bool ask(Op op, std::string_view path) {
    if (!result_.decision.allowed && asked_) return false;
    asked_ = true;
    Decision d = decide(snapshot_, op, path, caller_, now_ms_);
    result_.decision = d;
    if (!d.allowed) {
      result_.refused = Effect{op, std::string(path)};
    }
    return d.allowed;
  }

  // Every path of `tree` under `a` and under `b` (a subtree moving from a to b).
  bool ask_tree(const Subtree& tree, std::string_view a, std::string_view b) {
    if (!tree.complete) {
      if (!ask(Op::kRename, kUnresolvedPath)) {
        result_.refused.path =
            std::string(a);  // reported as the directory that could not be checked
        return false;
      }
      // What could not be listed may hold a protected path (a huge .git): refuse
      // rather than move it unseen.
      if (may_hold_protected(snapshot_.protected_globs, a) ||
          may_hold_protected(snapshot_.protected_globs, b)) {
        result_.decision = Decision{false, DenyReason::kProtectedPath};
        result_.refused = Effect{Op::kRename, std::string(a)};
        return false;
      }
    }
    for (const auto& rel : tree.entries) {
      if (!ask(Op::kRename, join(a, rel)) || !ask(Op::kRename, join(b, rel))) return false;
    }
    return true;
  }

  EffectDecision result() && { return std::move(result_); }

 private:
  const GateSnapshot& snapshot_;
  const Caller& caller_;
  int64_t now_ms_;
  bool asked_ = false;
  EffectDecision result_;
};

}  // namespace

EffectDecision decide_rename(const GateSnapshot& snapshot, const RenamePlan& plan,
                             const Caller& caller, int64_t now_ms) {
  Judge judge(snapshot, caller, now_ms);
  [&] {
    if (!judge.ask(Op::kRename, plan.from) || !judge.ask(Op::kRename, plan.to)) return;
    if (plan.from_is_dir && !judge.ask_tree(plan.from_tree, plan.from, plan.to)) return;
    if (plan.exchange) {
      // The target moves onto the source's name: the same checks the other way.
      if (plan.target == RenameTarget::kDirectory) judge.ask_tree(plan.to_tree, plan.to, plan.from);
      return;
    }
    if (plan.target == RenameTarget::kFile) judge.ask(Op::kUnlink, plan.to);
    if (plan.target == RenameTarget::kDirectory) judge.ask(Op::kRmdir, plan.to);
  }();
  return std::move(judge).result();
}

EffectDecision decide_link(const GateSnapshot& snapshot, std::string_view source,
                           std::string_view name, const Caller& caller, int64_t now_ms) {
  Judge judge(snapshot, caller, now_ms);
  [&] {
    if (!judge.ask(Op::kLink, name) || !judge.ask(Op::kLink, source)) return;
    for (Op op : {Op::kOpenWrite, Op::kSetattr}) {
      if (decide(snapshot, op, name, caller, now_ms).allowed && !judge.ask(op, source)) return;
    }
    judge.ask(Op::kLink, name);  // the verdict reported: the create at `name`
  }();
  return std::move(judge).result();
}

}  // namespace leasefs::gate

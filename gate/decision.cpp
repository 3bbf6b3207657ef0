#include "gate/decision.hpp"

#include "base/enum_names.hpp"
#include "gate/glob.hpp"
#include "gate/protected_paths.hpp"

namespace leasefs::gate {

namespace {
constexpr base::EnumNames<DenyReason, 9> kReasonNames{{
    {DenyReason::kNone, "allowed"},
    {DenyReason::kNoTask, "no_task"},
    {DenyReason::kNotInProgress, "not_in_progress"},
    {DenyReason::kNoLease, "no_lease"},
    {DenyReason::kStaleLease, "stale_lease"},
    {DenyReason::kExpired, "expired"},
    {DenyReason::kOutOfScope, "out_of_scope"},
    {DenyReason::kProtectedPath, "protected_path"},
    {DenyReason::kTemporaryLeftover, "temporary_leftover"},
}};
}  // namespace

std::string_view to_string(DenyReason reason) noexcept {
  return base::enum_name(kReasonNames, reason);
}

bool is_protected_path(std::string_view path) noexcept {
  constexpr std::string_view kDir = ".longrun";
  return path.starts_with(kDir) && (path.size() == kDir.size() || path[kDir.size()] == '/');
}

bool is_expressible(std::string_view path) noexcept {
  return path.size() < kMaxPathLength && !path.starts_with('/');
}

namespace {

bool covers_path(const Grant& grant, std::string_view path) noexcept {
  if (grant.paths.empty()) return true;
  if (!is_expressible(path)) return false;
  // An empty path is the root, or a caller that did not resolve the path: either
  // way a grant narrowed by path does not cover it (fail closed).
  if (path.empty()) return false;
  for (const auto& pattern : grant.paths) {
    if (glob_match(pattern, path)) return true;
  }
  return false;
}

}  // namespace

Decision decide(const GateSnapshot& snapshot, Op op, std::string_view path,
                const Caller& /*caller*/, int64_t now_ms) noexcept {
  // .longrun/ is the daemon's own; no lease opens it (I5).
  if (is_protected_path(path)) return {false, DenyReason::kProtectedPath};
  if (!snapshot.has_task) return {false, DenyReason::kNoTask};
  if (snapshot.status != TaskStatus::kInProgress) return {false, DenyReason::kNotInProgress};
  // A --protect glob: only a grant that names the path explicitly opens it.
  const std::string* guard = protecting_glob(snapshot.protected_globs, path);

  // Report the most specific reason: a grant for this turn that did not fit
  // beats an expired one, which beats one from another turn (I3).
  DenyReason reason = DenyReason::kNoLease;
  for (const Grant& grant : snapshot.grants) {
    if (grant.turn != snapshot.turn) {
      if (reason == DenyReason::kNoLease) reason = DenyReason::kStaleLease;
      continue;
    }
    if (grant.expires_ms && now_ms >= *grant.expires_ms) {
      if (reason != DenyReason::kOutOfScope) reason = DenyReason::kExpired;
      continue;
    }
    if ((grant.ops & op_class(op)) == 0 || !covers_path(grant, path)) {
      reason = DenyReason::kOutOfScope;
      continue;
    }
    if (guard && !grant_names(grant, path, *guard)) {
      reason = DenyReason::kProtectedPath;
      continue;
    }
    return {true, DenyReason::kNone, &grant};
  }
  return {false, reason};
}

}  // namespace leasefs::gate

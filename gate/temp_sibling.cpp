#include "gate/temp_sibling.hpp"

#include "gate/glob.hpp"
#include "gate/protected_paths.hpp"

namespace leasefs::gate {

namespace {

constexpr std::string_view kGitIndexLock = ".git/index.lock";

std::string_view dir_of(std::string_view path) noexcept {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
}

std::string_view name_of(std::string_view path) noexcept {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_git_index_lock(std::string_view path) noexcept {
  return path == kGitIndexLock ||
         (path.ends_with(kGitIndexLock) && path[path.size() - kGitIndexLock.size() - 1] == '/');
}

bool grant_in_force(const GateSnapshot& snapshot, const Grant& grant, int64_t now_ms) noexcept {
  return grant.turn == snapshot.turn && (!grant.expires_ms || now_ms < *grant.expires_ms);
}

// A path-narrowed grant with the write class: the kind whose exact paths tools
// edit through temporaries.
bool edits_by_path(const Grant& grant) noexcept {
  return !grant.paths.empty() && (grant.ops & kClassWrite) != 0;
}

bool lease_open(const GateSnapshot& snapshot) noexcept {
  return snapshot.has_task && snapshot.status == TaskStatus::kInProgress;
}

// Whether a grant's glob reaches into `dir`: its directory part matches it, or,
// for a glob that goes below its directory part (`dir/`, which means `dir/**`,
// and `dir/**`), the glob matches `dir` itself.
bool reaches_into(std::string_view pattern, std::string_view dir) noexcept {
  while (pattern.starts_with('/')) pattern.remove_prefix(1);
  while (pattern.starts_with("./")) pattern.remove_prefix(2);
  if (pattern.empty()) return false;
  if ((pattern.ends_with('/') || pattern.ends_with("**")) && glob_match(pattern, dir)) return true;
  return glob_match(dir_of(pattern), dir);
}

}  // namespace

Decision decide_temp_sibling(const GateSnapshot& snapshot, std::string_view path,
                             const Caller& /*caller*/, int64_t now_ms) noexcept {
  if (is_protected_path(path)) return {false, DenyReason::kProtectedPath};
  if (!lease_open(snapshot) || !is_expressible(path) || path.empty()) {
    return {false, DenyReason::kOutOfScope};
  }
  // No temporaries at a protected path: a leftover there (a new hook in
  // .git/hooks) would be a protected file no grant named.
  if (protecting_glob(snapshot.protected_globs, path)) return {false, DenyReason::kProtectedPath};
  const std::string_view dir = dir_of(path);
  for (const Grant& grant : snapshot.grants) {
    if (!grant_in_force(snapshot, grant, now_ms) || !edits_by_path(grant)) continue;
    if (is_git_index_lock(path)) return {true, DenyReason::kNone, &grant};
    for (std::string_view pattern : grant.paths) {
      if (reaches_into(pattern, dir)) return {true, DenyReason::kNone, &grant};
    }
  }
  return {false, DenyReason::kOutOfScope};
}

bool temp_sibling_turn_open(const GateSnapshot& snapshot, uint64_t turn, int64_t now_ms) noexcept {
  if (!lease_open(snapshot) || snapshot.turn != turn) return false;
  // `end-turn` and `revoke` keep the turn's index: the lease that made the
  // siblings must still be there, or a later grant would revive them. A grant
  // whose TTL passed is not (the service publishes at every expiry).
  for (const Grant& grant : snapshot.grants) {
    if (grant_in_force(snapshot, grant, now_ms) && edits_by_path(grant)) return true;
  }
  return false;
}

Decision decide_on_temp_sibling(const GateSnapshot& snapshot, Op op, uint64_t turn,
                                const Caller& /*caller*/, int64_t now_ms) noexcept {
  if (!temp_sibling_turn_open(snapshot, turn, now_ms)) return {false, DenyReason::kStaleLease};
  const OpClass cls = op_class(op);
  if (cls != kClassWrite && cls != kClassAttr && op != Op::kUnlink) {
    return {false, DenyReason::kOutOfScope};
  }
  for (const Grant& grant : snapshot.grants) {
    if (grant_in_force(snapshot, grant, now_ms) && edits_by_path(grant)) {
      return {true, DenyReason::kNone, &grant};
    }
  }
  return {false, DenyReason::kNoLease};
}

Decision decide_temp_sibling_rename(const GateSnapshot& snapshot, std::string_view from,
                                    std::string_view to, bool to_exists, uint64_t turn,
                                    const Caller& caller, int64_t now_ms) noexcept {
  if (!temp_sibling_turn_open(snapshot, turn, now_ms)) return {false, DenyReason::kStaleLease};
  if (is_git_index_lock(from)) {
    // Only onto the index beside it.
    const bool beside = dir_of(from) == dir_of(to) && name_of(to) == "index";
    if (!beside) return {false, DenyReason::kOutOfScope};
    return decide_on_temp_sibling(snapshot, Op::kWrite, turn, caller, now_ms);
  }
  // Replacing the target's content is a write of the target; a new name is a
  // create of it, which the lease must give as it would to `>`.
  return decide(snapshot, to_exists ? Op::kOpenWrite : Op::kCreate, to, caller, now_ms);
}

}  // namespace leasefs::gate

// The gate decision: a pure function of an immutable snapshot and (op, path,
// caller). No I/O, no locks, no allocation on the allow path.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gate/grant.hpp"
#include "gate/op.hpp"
#include "gate/task_status.hpp"

namespace leasefs::gate {

enum class DenyReason : uint8_t {
  kNone,
  kNoTask,
  kNotInProgress,
  kNoLease,
  kStaleLease,
  kExpired,
  kOutOfScope,
  kProtectedPath,
  kTemporaryLeftover,  // not a refusal of a call: a temporary sibling outlived its turn
};

std::string_view to_string(DenyReason reason) noexcept;

struct Caller {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// What the gate needs to know, frozen at publication time.
struct GateSnapshot {
  uint64_t version = 0;  // grows with every publication
  bool has_task = false;
  TaskStatus status = TaskStatus::kPending;
  uint64_t turn = 0;
  std::vector<Grant> grants;
  // True when some current grant is narrowed by path, or when protected globs
  // could close a path an unscoped grant would open, so the caller must resolve
  // the path; otherwise only the .longrun check needs it.
  bool needs_path = false;
  // `leasefs mount --protect` globs (protected_paths.hpp): no grant opens them
  // unless it names them explicitly. Set by Gate::publish from the mount's list.
  std::vector<std::string> protected_globs;
  // Ask mode (gate/ask.hpp): how long a refused mutation may wait for a person,
  // in milliseconds; 0 fails it at once.
  int64_t ask_ms = 0;
};

struct Decision {
  bool allowed = false;
  DenyReason reason = DenyReason::kNone;
  const Grant* grant = nullptr;  // the covering grant when allowed; lives as long as the snapshot
};

// `path` is relative to the root ("" for the root itself, "src/a.c").
bool is_protected_path(std::string_view path) noexcept;

// What the filesystem passes for a path it cannot express in full: longer than
// kMaxPathLength, or whose parent chain no longer leads to the root. It starts
// with '/', so no relative path and no glob can equal it.
inline constexpr std::string_view kUnresolvedPath = "/(unresolved)";
inline constexpr size_t kMaxPathLength = 4096;  // PATH_MAX, with the terminating NUL

// False for kUnresolvedPath, any path starting with '/', and any path of
// kMaxPathLength bytes or more. Only a grant with no path scope covers such a path;
// it never matches a glob, not even `**`.
bool is_expressible(std::string_view path) noexcept;

Decision decide(const GateSnapshot& snapshot, Op op, std::string_view path, const Caller& caller,
                int64_t now_ms) noexcept;

}  // namespace leasefs::gate

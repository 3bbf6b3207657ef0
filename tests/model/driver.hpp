// The randomized driver: random operations as the agent (uid 65534) against a
// real leasefs mount and, where the model says they reach the file system, a
// plain directory too; grants, turns, end-turns, revokes, checkpoints and
// resumes in between, published as the service would. Each answer is compared
// with the model's, and every so often the whole tree (names, types, modes,
// sizes, content, links, owners, xattrs) with the plain directory's and the
// model's names. On a divergence the steps are shrunk to a minimal replay.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/model/gate_model.hpp"

namespace leasefs::test::model {

// One step: an operation, or a change of the lease.
struct Step {
  enum class Kind : uint8_t {
    kOp,
    kGrant,
    kTurn,
    kEndTurn,
    kRevoke,
    kCheckpoint,
    kResume,
    kExpire,   // the TTL of grant `revoke` passes
    kCompare,  // the whole trees (reading through the mount fills the kernel's caches)
  };
  Kind kind = Kind::kOp;
  Op op;
  // Two agents at once (RunOptions::two_agents): `op` by the first, in src/, and
  // `op2` by the second, in docs/, run on the mount together.
  bool pair = false;
  Op op2;
  MGrant grant;                  // kGrant
  int revoke = -1;               // kRevoke: index of the grant, -1 for all; kExpire: which
  bool checkpoint_stop = false;  // kCheckpoint: the task leaves in_progress
};

std::string describe(const Step& step);

struct RunOptions {
  uint64_t seed = 1;
  size_t ops = 2000;
  Broken broken = Broken::kNone;
  bool stable_names = false;  // FsOptions::stable_names: paths cached while no name changes
  bool protect = true;        // the default protected globs (off: --no-default-protect)
  bool two_agents = false;    // most operations come in pairs, from two processes at once
  size_t tree_every = 50;     // compare whole trees every this many steps
  int shrink_seconds = 60;    // the budget for shrinking a divergence
};

struct RunResult {
  bool diverged = false;
  std::string what;          // the first divergence
  std::vector<Step> replay;  // the minimal steps that still diverge
  std::string replay_what;   // how the replay diverges (it may differ from `what`)
  size_t steps = 0;          // steps run before the divergence (or all)
  size_t allowed = 0, refused = 0, kernel_errors = 0;
  double seconds = 0;  // the run, shrinking not included
};

RunResult run(const RunOptions& options);

// The steps as a replay a person can read (one per line).
std::string replay_text(const std::vector<Step>& steps);

}  // namespace leasefs::test::model

// The gate against its documentation: random operations as the agent against a
// real mount, each answer compared with the reference model (gate_model.hpp)
// and a plain directory (driver.hpp). A bounded run for CI; scripts/model-soak
// runs long ones. Environment, for soaks and replays:
//   LEASEFS_MODEL_SEED   the seed of the random run (default: random, printed)
//   LEASEFS_MODEL_OPS    steps per run (default 5000)
//   LEASEFS_MODEL_BREAK  a model rule to forget (op_classes, replace_unlinks,
//                        siblings): the run must then diverge
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "tests/model/driver.hpp"

namespace leasefs::test::model {
namespace {

size_t ops_from_env() {
  const char* v = std::getenv("LEASEFS_MODEL_OPS");
  return v ? std::strtoull(v, nullptr, 10) : 5000;
}

Broken broken_from_env() {
  const char* v = std::getenv("LEASEFS_MODEL_BREAK");
  return v ? broken_from_name(v) : Broken::kNone;
}

void report(const RunOptions& o, const RunResult& r) {
  std::printf(
      "seed %llu: %zu steps in %.1f s (%.0f steps/s): %zu allowed, %zu refused, %zu "
      "kernel errors%s%s%s\n",
      static_cast<unsigned long long>(o.seed), r.steps, r.seconds,
      r.seconds > 0 ? static_cast<double>(r.steps) / r.seconds : 0.0, r.allowed, r.refused,
      r.kernel_errors, o.stable_names ? ", path caches on" : "",
      o.protect ? "" : ", no protected globs", o.two_agents ? ", two agents at once" : "");
  if (r.diverged) {
    std::printf(
        "divergence: %s\nminimal replay (%zu steps; LEASEFS_MODEL_SEED=%llu), which "
        "diverges with: %s\n%s",
        r.what.c_str(), r.replay.size(), static_cast<unsigned long long>(o.seed),
        r.replay_what.c_str(), replay_text(r.replay).c_str());
  }
  std::fflush(stdout);
}

TEST(ModelDriver, FixedSeedAgreesWithTheDocumentedGate) {
  RunOptions o;
  o.seed = 20261206;
  o.ops = ops_from_env();
  o.broken = broken_from_env();
  RunResult r = run(o);
  report(o, r);
  EXPECT_FALSE(r.diverged) << r.what << "\n" << replay_text(r.replay);
}

TEST(ModelDriver, RandomSeedAgreesWithTheDocumentedGate) {
  RunOptions o;
  const char* seed = std::getenv("LEASEFS_MODEL_SEED");
  o.seed = seed ? std::strtoull(seed, nullptr, 10) : std::random_device{}();
  o.ops = ops_from_env();
  o.broken = broken_from_env();
  o.stable_names = (o.seed & 1) != 0;  // half the runs with the path caches on
  o.protect = (o.seed & 2) != 0;       // half with no protected globs (--no-default-protect)
  o.two_agents = (o.seed & 4) != 0;    // half with two agents at once
  RunResult r = run(o);
  report(o, r);
  EXPECT_FALSE(r.diverged) << "LEASEFS_MODEL_SEED=" << o.seed << ": " << r.what << "\n"
                           << replay_text(r.replay);
}

// The driver can fail: a model that forgets one documented rule diverges from the
// gate, and the replay it prints is shrunk.
TEST(ModelDriver, AModelThatForgetsARuleDiverges) {
  for (Broken broken : {Broken::kOpClasses, Broken::kReplaceUnlinks, Broken::kSiblings}) {
    RunOptions o;
    o.seed = 20261206;
    o.ops = 20000;  // stops at the first divergence
    o.broken = broken;
    // A replay of thousands of steps takes seconds under a sanitizer: the budget
    // is what the slowest build needs (a release build shrinks in well under one).
    o.shrink_seconds = 60;
    RunResult r = run(o);
    report(o, r);
    EXPECT_TRUE(r.diverged) << "rule " << static_cast<int>(broken) << " was never exercised";
    // The shrunk replay still diverges, and is shorter than the run.
    EXPECT_LT(r.replay.size(), r.steps);
  }
}

}  // namespace
}  // namespace leasefs::test::model

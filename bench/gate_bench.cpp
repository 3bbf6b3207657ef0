// gate_bench: what the gate's decision costs per operation, to set against a FUSE
// round trip (tens of microseconds). Google Benchmark; run
//   build/bench/gate_bench --benchmark_min_time=0.2
// Snapshots: the bench mount's (one grant, whole tree) and a realistic one (three
// grants of the turn narrowed by globs, one of an older turn, two --protect globs),
// against which the filesystem must also resolve the path (a readlink of
// /proc/self/fd/N, measured last).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "base/unique_fd.hpp"
#include "fuse/path_cache.hpp"
#include "gate/decision.hpp"
#include "gate/gate.hpp"

namespace {

using namespace leasefs::gate;

Grant grant(std::string id, uint64_t turn, std::vector<std::string> paths, OpMask ops = kAllOps) {
  Grant g;
  g.id = std::move(id);
  g.turn = turn;
  g.reason = "benchmark";
  g.paths = std::move(paths);
  g.ops = ops;
  return g;
}

GateSnapshot whole_tree() {
  GateSnapshot s;
  s.has_task = true;
  s.status = TaskStatus::kInProgress;
  s.turn = 7;
  s.grants.push_back(grant("G_1", 7, {}));
  return s;
}

GateSnapshot narrowed() {
  GateSnapshot s;
  s.has_task = true;
  s.status = TaskStatus::kInProgress;
  s.turn = 7;
  s.grants.push_back(grant("G_1", 6, {}));  // an older turn's: skipped
  s.grants.push_back(grant("G_2", 7, {"docs/**", "*.md"}));
  s.grants.push_back(grant("G_3", 7, {"tests/**/*.py"}, kClassWrite | kClassCreate));
  s.grants.push_back(grant("G_4", 7, {"src/**/*.c", "src/**/*.h", "include/**"}));
  s.protected_globs = {".env", "secrets/**"};
  s.needs_path = true;
  return s;
}

const Caller kCaller{4242, 1000, 1000};

void BM_decide_whole_tree(benchmark::State& state) {
  const GateSnapshot s = whole_tree();
  for (auto _ : state) {
    benchmark::DoNotOptimize(decide(s, Op::kWrite, "", kCaller, 1));
  }
}
BENCHMARK(BM_decide_whole_tree);

void BM_decide_narrowed_last_grant(benchmark::State& state) {
  const GateSnapshot s = narrowed();
  for (auto _ : state) {
    benchmark::DoNotOptimize(decide(s, Op::kWrite, "src/fuse/deep/dir/op_write.c", kCaller, 1));
  }
}
BENCHMARK(BM_decide_narrowed_last_grant);

void BM_decide_narrowed_refused(benchmark::State& state) {
  const GateSnapshot s = narrowed();
  for (auto _ : state) {
    benchmark::DoNotOptimize(decide(s, Op::kCreate, "build/CMakeFiles/x.o", kCaller, 1));
  }
}
BENCHMARK(BM_decide_narrowed_refused);

// What op_write pays: the snapshot read, decide() and the verdict (grant id copied).
void BM_gate_check_whole_tree(benchmark::State& state) {
  Gate gate;
  gate.publish(whole_tree());
  for (auto _ : state) benchmark::DoNotOptimize(gate.check(Op::kWrite, "", kCaller));
}
BENCHMARK(BM_gate_check_whole_tree)->ThreadRange(1, 2);

void BM_gate_check_narrowed(benchmark::State& state) {
  Gate gate;
  gate.publish(narrowed());
  for (auto _ : state) {
    benchmark::DoNotOptimize(gate.check(Op::kWrite, "src/fuse/deep/dir/op_write.c", kCaller));
  }
}
BENCHMARK(BM_gate_check_narrowed)->ThreadRange(1, 2);

// The path a narrowed snapshot makes the filesystem resolve for every check.
void BM_resolve_path_readlink(benchmark::State& state) {
  leasefs::base::UniqueFd fd(::open("/usr/include/stdio.h", O_PATH | O_CLOEXEC));
  const std::string proc = "/proc/self/fd/" + std::to_string(fd.get());
  char buf[4096];
  for (auto _ : state) benchmark::DoNotOptimize(::readlink(proc.c_str(), buf, sizeof buf));
}
BENCHMARK(BM_resolve_path_readlink);

// What a write through an open file pays instead while no name changed: the
// names generation and the handle's cached path (fuse/path_cache.hpp).
void BM_resolve_path_cached(benchmark::State& state) {
  leasefs::fuse::NamesGeneration names;
  leasefs::fuse::CachedPath where;
  where.store(names.now(), "src/sub/file.c");
  for (auto _ : state) benchmark::DoNotOptimize(where.at(names.now()));
}
BENCHMARK(BM_resolve_path_cached);

}  // namespace

BENCHMARK_MAIN();

// commit_bench: what each part of a change of state costs on the request's
// path (Service::commit), by the number of grants in force. Google Benchmark; run
//   build/bench/commit_bench --benchmark_min_time=0.2
// The grant series of control_bench keeps 0 to 50 grants in force; a session
// usually has a few.
#include <benchmark/benchmark.h>

#include <string>

#include "base/sha256.hpp"
#include "gate/gate.hpp"
#include "gate/task_state.hpp"
#include "service/status_report.hpp"
#include "state/state_text.hpp"

namespace {

using namespace leasefs;

gate::TaskState state_with(int64_t grants) {
  gate::TaskState s;
  s.task_id = "T_20261206_0001";
  s.description = "benchmark the parts of a commit";
  s.done_when = "the numbers are printed";
  s.status = gate::TaskStatus::kInProgress;
  s.turn_index = 7;
  s.history.push_back({gate::TaskStatus::kPending, gate::TaskStatus::kInProgress, "start", 1});
  for (int64_t i = 0; i < grants; ++i) {
    gate::Grant g;
    g.id = "G_" + std::to_string(i + 1);
    g.turn = 7;
    g.reason = "bench";
    g.paths = {"src/*"};
    g.issued_ms = 1'700'000'000'000 + i;
    g.expires_ms = g.issued_ms + 600'000;
    s.grants.push_back(std::move(g));
  }
  return s;
}

// The state log's record as it was made before state/state_text.hpp: the
// whole state built as a JSON object and dumped, then its SHA-256.
void StateRecordRebuilt(benchmark::State& st) {
  const gate::TaskState s = state_with(st.range(0));
  for (auto _ : st) {
    const std::string payload = gate::to_json(s).dump();
    benchmark::DoNotOptimize(base::sha256_hex(payload));
  }
}
BENCHMARK(StateRecordRebuilt)->Arg(1)->Arg(25)->Arg(50);

// The same record as StateLog::append makes it now, one grant added each time
// (as a grant does), the grants' texts kept from the record before.
void StateRecord(benchmark::State& st) {
  gate::TaskState s = state_with(st.range(0));
  state::StateText text;
  (void)text.of(s);
  gate::Grant added = s.grants.empty() ? gate::Grant{} : s.grants.back();
  uint64_t n = 0;
  for (auto _ : st) {
    added.id = "G_added_" + std::to_string(++n);
    if (!s.grants.empty()) s.grants.pop_back();
    s.grants.push_back(added);
    const std::string payload = text.of(s).str();
    benchmark::DoNotOptimize(base::sha256_hex(payload));
  }
}
BENCHMARK(StateRecord)->Arg(1)->Arg(25)->Arg(50);

// status.md's text, rendered by its writer's thread (state/status_file.hpp);
// a change pays only a copy of the state (StateCopy).
void StatusText(benchmark::State& st) {
  const gate::TaskState s = state_with(st.range(0));
  const std::vector<nlohmann::json> refusals;
  for (auto _ : st) benchmark::DoNotOptimize(service::render_status_md(s, refusals, 1));
}
BENCHMARK(StatusText)->Arg(1)->Arg(25)->Arg(50);

// One copy of the state (`next = state_`, the store's last state, the one
// status.md's text is rendered from).
void StateCopy(benchmark::State& st) {
  const gate::TaskState s = state_with(st.range(0));
  for (auto _ : st) {
    gate::TaskState copy = s;
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(StateCopy)->Arg(1)->Arg(25)->Arg(50);

// The gate's new snapshot (Service::publish_snapshot).
void GatePublish(benchmark::State& st) {
  const gate::TaskState s = state_with(st.range(0));
  gate::Gate gate;
  for (auto _ : st) {
    gate::GateSnapshot snap;
    snap.has_task = true;
    snap.status = s.status;
    snap.turn = s.turn_index;
    snap.grants = s.grants;
    gate.publish(std::move(snap));
  }
}
BENCHMARK(GatePublish)->Arg(1)->Arg(25)->Arg(50);

}  // namespace

BENCHMARK_MAIN();

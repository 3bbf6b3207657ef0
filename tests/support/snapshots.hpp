// Gate snapshots the tests (and the bench mount) publish by hand.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gate/decision.hpp"

namespace leasefs::test {

// A task in progress at `turn` holding one grant "G_<turn>" for that turn,
// narrowed to `paths` (none: the whole tree) with every op class.
inline gate::GateSnapshot leased_snapshot(uint64_t turn, std::vector<std::string> paths = {}) {
  gate::GateSnapshot s;
  s.has_task = true;
  s.status = gate::TaskStatus::kInProgress;
  s.turn = turn;
  gate::Grant g;
  g.id = "G_" + std::to_string(turn);
  g.turn = turn;
  g.reason = "test";
  g.paths = std::move(paths);
  s.grants.push_back(std::move(g));
  return s;
}

// A task in progress at `turn` with no grant.
inline gate::GateSnapshot unleased_snapshot(uint64_t turn) {
  gate::GateSnapshot s;
  s.has_task = true;
  s.status = gate::TaskStatus::kInProgress;
  s.turn = turn;
  return s;
}

}  // namespace leasefs::test

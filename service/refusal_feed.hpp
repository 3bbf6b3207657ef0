// The refusals an agent host's tool hooks hand back to the model: those noted
// while one tool call ran. The host's pre-tool hook marks where a call begins
// (under the host's id for the call); its post-tool hook takes what was noted
// after that mark. Everything here runs with the agent's uid, which may call both
// itself, so the rules only ever make the answer longer, never shorter:
// - a mark is set once per id (a second mark of the same id changes nothing);
// - a mark is taken once; taking an id again, or one never marked (the pre-tool
//   hook did not run, or the mark was pushed out by kMaxMarks newer ones), answers
//   every refusal of the turn, saying so;
// - refusals past what is kept or shown are counted (`left_out`), never dropped
//   silently.
// Its own lock: the control plane asks without the service's.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace leasefs::service {

class RefusalFeed {
 public:
  static constexpr size_t kKept = 512;  // refusals kept, newest last
  static constexpr size_t kShown = 20;  // refusals handed back at most; the rest counted
  static constexpr size_t kMaxMarks = 1024;

  struct Window {
    std::vector<nlohmann::json> refusals;  // oldest first, each with its `seq`
    uint64_t left_out = 0;                 // refusals of the window not in `refusals`
    bool whole_turn = false;               // no mark to start from: the turn's refusals
  };

  // Stamps each refusal with the next sequence number and keeps it.
  void note(const std::vector<nlohmann::json>& refusals);
  // A tool call `call` begins now.
  void mark(const std::string& call);
  // What was noted since `call` was marked, once; the turn's refusals when there
  // is no mark to take. An empty `call` answers the turn's and takes nothing.
  Window take(const std::string& call, uint64_t turn);
  // A new task: nothing of the last one is handed back.
  void forget();

 private:
  struct Mark {
    uint64_t seq = 0;  // the last refusal noted before the call began
    bool taken = false;
  };
  Window shown(std::vector<nlohmann::json> all, uint64_t left_out) const;
  Window turn_window(uint64_t turn) const;

  mutable std::mutex mu_;
  uint64_t seq_ = 0;
  std::deque<nlohmann::json> kept_;
  // Kept refusals pushed out, per turn, for that turn's `left_out`.
  std::map<uint64_t, uint64_t> dropped_;
  std::map<std::string, Mark> marks_;
  std::deque<std::string> mark_order_;  // oldest first, to push the oldest out
};

}  // namespace leasefs::service

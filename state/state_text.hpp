// The task state's JSON text for the state log, made without serializing again
// what has not changed: a grant is never changed once issued, so each grant's
// text is kept from one record to the next while it is in force. A change of
// state then costs its dozen members, not every grant in force.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/json_text.hpp"
#include "gate/task_state.hpp"

namespace leasefs::state {

class StateText {
 public:
  // The text of gate::to_json(state), "grants" its last member.
  base::JsonText of(const gate::TaskState& state);

 private:
  struct Kept {
    gate::Grant grant;  // the text is reused only for an equal grant
    base::JsonText text;
    uint64_t generation = 0;  // the last state that held it
  };
  std::map<std::string, Kept, std::less<>> grants_;  // by id, the grants of the last state
  uint64_t generation_ = 0;
};

}  // namespace leasefs::state

// The two callers the gate tests act as: a person who may approve, and an agent
// who may not.
#pragma once

#include "gate/actor.hpp"

namespace leasefs::testing {

inline const gate::Actor kPerson{.pid = 1, .uid = 0, .gid = 0, .approver = true};
inline const gate::Actor kAgent{.pid = 2, .uid = 1000, .gid = 1000, .approver = false};

}  // namespace leasefs::testing

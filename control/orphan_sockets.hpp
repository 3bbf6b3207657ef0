// Socket files that daemons killed without a chance to clean up left in a socket
// directory (/run/leasefs): a socket is given to the agent's group (`--agent`),
// and once that group is deleted its id may be handed to a new group, whose
// members would then be the ones the file lets in. The directory keeps no such file.
#pragma once

#include <string>

namespace leasefs::control {

// Removes every socket file in `dir` whose group no longer exists and on which no
// daemon answers (a connect is refused). A live daemon's socket, and any socket
// of an existing group, are left alone: a daemon binds its file as its own group
// and gives it away only after, so a socket being set up is never taken.
// Returns how many were removed; never throws (a directory it cannot read is skipped).
int remove_orphaned_sockets(const std::string& dir) noexcept;

}  // namespace leasefs::control

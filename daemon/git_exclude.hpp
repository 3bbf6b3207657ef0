// Keeps .longrun/ out of git: when the root is a git work tree, `/.longrun/` is
// added (once) to the repository's info/exclude, so `git add -A` under a lease
// never stages memory.db, the ledger or the audit.
#pragma once

#include <optional>
#include <string>

namespace leasefs::daemon {

// `root_fd` reaches the tree underneath any mount. Returns what was done, as a
// sentence for the daemon's log (nullopt when there is nothing to do); throws
// nothing: a failure is returned as a sentence too, and the daemon carries on.
std::optional<std::string> exclude_longrun_from_git(int root_fd);

}  // namespace leasefs::daemon

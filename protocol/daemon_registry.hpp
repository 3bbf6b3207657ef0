// The registry of running daemons: one JSON file per daemon, named by its mount's
// id in /proc/self/mountinfo, in a directory only the daemons' owner can change
// (/run/leasefs/daemons for root; $XDG_RUNTIME_DIR/leasefs/daemons for another
// user). leasectl finds the daemon serving a directory here, never through the
// tree: the agent owns the tree and may mount, bind or park anything in it.
//
// A reader trusts an entry only when every directory from / down to it and the
// file itself belong to root or the registry's owner and nobody else may write
// them (a root-owned sticky directory such as /tmp may be on the way), and only
// while its daemon's pid is alive. A daemon removes its entry when it stops
// cleanly and sweeps the entries of dead daemons when it starts.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace leasefs::protocol {

struct RegistryEntry {
  pid_t pid = 0;
  uid_t owner = 0;         // who mounted it (the mount's user_id=)
  int mount_id = -1;       // /proc/self/mountinfo's first field
  std::string device;      // the mount's "major:minor"
  std::string mountpoint;  // where it is mounted
  std::string root;        // the tree it mirrors
  std::string socket;      // its control socket
};

// Where `owner`'s daemons register; empty for a user without $XDG_RUNTIME_DIR.
std::string registry_dir(uid_t owner);

// The entries in `dir` that `owner` wrote and whose daemon lives. `why_not`, when
// given, says why the directory itself is not trusted (nothing is read then).
std::vector<RegistryEntry> read_registry(const std::string& dir, uid_t owner,
                                         std::string* why_not = nullptr);

// The daemon's side: writes `e` into `dir` (created 0755 if missing) atomically,
// after removing the entries of dead daemons. Returns the file's path; throws
// Error{io_error} when it cannot.
std::string register_daemon(const std::string& dir, const RegistryEntry& e);
// Removes the file at `path` if it is still this process's entry.
void unregister_daemon(const std::string& path) noexcept;

}  // namespace leasefs::protocol

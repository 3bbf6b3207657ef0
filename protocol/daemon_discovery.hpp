// Finding the daemon that serves a directory, and deciding whether to trust what
// answers on its socket.
//
// The agent has a shell under its own uid and owns the tree: it can mount a FUSE
// filesystem of its own over any directory of it (even one that calls itself
// fuse.leasefs), park whatever a client would read there, and bind a socket
// wherever it may write. So discovery reads nothing inside the tree. A daemon is
// found in the registry of running daemons (protocol/daemon_registry.hpp), which
// only root (or, for a user's own daemons, that user) can change, and is used only
// when:
//   - its entry names a fuse.leasefs mount that is still in this process's mount
//     table with the same mount id, device, mount point and owner (user_id=), and
//     that owner is root or the user running the client;
//   - its root or its mount point contains the directory (by path, as the kernel
//     names it: nothing mounted on top of the tree is entered or asked);
//   - once connected, the process at the socket is root or that owner and is the
//     very pid the entry names (SO_PEERCRED).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/client.hpp"

namespace leasefs::protocol {

struct DiscoveredDaemon {
  std::string socket;      // where to connect
  std::string mountpoint;  // the leasefs mount serving the directory
  std::string root;        // the root it mirrors
  uid_t owner = 0;         // who mounted it (the mount's user_id=)
  pid_t pid = 0;           // the daemon's pid, from its registry entry
};

struct Discovery {
  std::optional<DiscoveredDaemon> daemon;
  // Why there is no daemon: the directory is in no served tree, in several, or
  // in a leasefs mount no daemon registered.
  std::string problem;
  bool untrusted = false;  // a mount was found and refused
};

// The daemon serving `dir` (an absolute path; a relative one is taken from the
// current directory), as seen by a client running as `self`.
Discovery discover_daemon(std::string_view dir, uid_t self);

// Every daemon this client may trust, as seen by `self`: each registered daemon
// whose fuse.leasefs mount the mount table confirms (the same checks as above).
std::vector<DiscoveredDaemon> trusted_daemons(uid_t self);

// nullopt when the peer of the connected socket `fd` may be the daemon `d`
// describes; otherwise what is wrong, for the person reading it.
std::optional<std::string> check_daemon_peer(int fd, const DiscoveredDaemon& d);

// What answered is not the daemon discovery found (what() says why).
class UntrustedDaemon : public NoDaemon {
 public:
  using NoDaemon::NoDaemon;
};

// Connects to `d.socket`. A daemon from discovery (pid set) must also pass
// check_daemon_peer, or this throws UntrustedDaemon; one named by the caller
// (pid 0) is the caller's choice. Throws NoDaemon when nothing answers.
Client connect_daemon(const DiscoveredDaemon& d);

}  // namespace leasefs::protocol

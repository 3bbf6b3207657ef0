// Finding the daemon that serves a directory, and deciding whether to trust what
// answers on its socket.
//
// The agent has a shell under its own uid: it can mount a FUSE filesystem of its
// own over a directory it owns (even one that calls itself fuse.leasefs), and it
// can bind a socket wherever it may write. A client that followed either would
// advance turns on a daemon that gates nothing, or show an approver what the agent
// chose. So a socket found by discovery (not named with --socket or
// LEASEFS_SOCKET) is used only when:
//   - the leasefs mount serving the directory is the top of the mount stack there
//     and no other leasefs mount lies underneath it (nested roots are not
//     supported, so a stacked one is somebody else's);
//   - that mount was made by root or by the user running the client (user_id= in
//     the mount's options, which the kernel sets and the mounter cannot choose);
//   - the process at the socket is root or that mount's owner (SO_PEERCRED), and,
//     when the daemon recorded its pid in .longrun/socket, it is that very process.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace leasefs::protocol {

struct DiscoveredDaemon {
  std::string socket;      // where to connect
  std::string mountpoint;  // the leasefs mount serving the directory
  std::string root;        // the root it mirrors (the mount's source)
  uid_t owner = 0;         // who mounted it (the mount's user_id=)
  pid_t pid = 0;           // the daemon's pid from .longrun/socket; 0 when unknown
};

struct Discovery {
  std::optional<DiscoveredDaemon> daemon;
  // Why there is no daemon: not inside a leasefs mount, or one that is not trusted.
  std::string problem;
  bool untrusted = false;  // a mount was found and refused
};

// The daemon serving `dir`, as seen by a client running as `self`.
Discovery discover_daemon(std::string_view dir, uid_t self);

// nullopt when the peer of the connected socket `fd` may be the daemon `d`
// describes; otherwise what is wrong, for the person reading it.
std::optional<std::string> check_daemon_peer(int fd, const DiscoveredDaemon& d);

// .longrun/socket: the socket path on the first line, then "pid N".
struct SocketPointer {
  std::string socket;
  pid_t pid = 0;
};
std::string format_socket_pointer(std::string_view socket, pid_t pid);
std::optional<SocketPointer> parse_socket_pointer(std::string_view text);

}  // namespace leasefs::protocol

// The control socket's listening end: bind (replacing a stale socket file, never
// a live one), chmod and chown, listen, accept, and on close remove the file if
// it is still ours. Owned and used by the server's event loop only.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/unique_fd.hpp"

namespace leasefs::control {

struct ListenerOptions {
  std::string socket_path;
  mode_t socket_mode = 0660;
  gid_t socket_gid = static_cast<gid_t>(-1);  // -1 keeps the daemon's group
  int backlog = 512;
};

class Listener {
 public:
  enum class Accepted { kClient, kEmpty, kOutOfDescriptors };

  // Creates the socket's directory (mkdir -p, 0755), removes the orphans in it
  // (orphan_sockets.hpp), replaces a stale socket file nobody answers on, binds,
  // chmods, chowns and listens. Throws
  // Error{io_error} naming the path and the reason.
  void open(const ListenerOptions& options);
  int fd() const noexcept { return fd_.get(); }

  // One pending connection, non-blocking and close-on-exec, into `*client`.
  // kEmpty: none waiting; kOutOfDescriptors: the process or system ran out (the
  // caller should pause accepting rather than spin on a readable socket).
  Accepted accept(base::UniqueFd* client);

  // Closes the socket and removes its file, but only if it is still ours.
  void close();

 private:
  std::string path_;
  base::UniqueFd fd_;
  ino_t ino_ = 0;
  bool bound_ = false;
};

// Creates `dir` and its missing parents with mode 0755. Throws Error{io_error}.
void make_socket_dir(const std::string& dir);

}  // namespace leasefs::control

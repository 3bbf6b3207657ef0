#include "control/listener.hpp"

#include <errno.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "base/error.hpp"
#include "base/make_dirs.hpp"
#include "control/orphan_sockets.hpp"

namespace leasefs::control {

namespace {

sockaddr_un make_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    throw Error(Errc::kIoError, "control socket path '" + path + "' must be 1 to " +
                                    std::to_string(sizeof(addr.sun_path) - 1) + " bytes long");
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

// A socket file left by a daemon that died is removed; one that a live daemon
// answers on is not: two daemons must never fight over one path.
void replace_stale_socket(const std::string& path, const sockaddr_un& addr) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw_io_error("cannot inspect control socket path " + path, errno);
  }
  if (!S_ISSOCK(st.st_mode)) {
    throw Error(Errc::kIoError, "control socket path " + path +
                                    " exists and is not a socket; refusing to replace it");
  }
  base::UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe) throw_io_error("socket", errno);
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
    throw Error(Errc::kIoError, "another leasefs daemon is already serving control socket " + path +
                                    " (stop it with `leasefs unmount` first)");
  }
  int err = errno;
  if (err != ECONNREFUSED && err != ENOENT) {
    throw_io_error("cannot tell whether control socket " + path + " is in use", err);
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw_io_error("cannot remove stale control socket " + path, errno);
  }
  spdlog::info("control: removed stale socket {}", path);
}

}  // namespace

void make_socket_dir(const std::string& dir) {
  if (dir.empty()) return;
  base::make_dirs_0755(dir, "control socket directory");
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) throw_io_error("stat " + dir, errno);
  if (!S_ISDIR(st.st_mode)) {
    throw Error(Errc::kIoError, "control socket directory " + dir + " is not a directory");
  }
}

void Listener::open(const ListenerOptions& options) {
  const std::string& path = options.socket_path;
  path_ = path;
  sockaddr_un addr = make_address(path);
  auto slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    make_socket_dir(path.substr(0, slash));
    remove_orphaned_sockets(path.substr(0, slash));
  }

  replace_stale_socket(path, addr);

  fd_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd_) throw_io_error("socket", errno);
  if (::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    throw_io_error("cannot bind control socket " + path, errno);
  }
  if (::chmod(path.c_str(), options.socket_mode) != 0) {
    int err = errno;
    ::unlink(path.c_str());
    throw_io_error("cannot chmod control socket " + path, err);
  }
  if (options.socket_gid != static_cast<gid_t>(-1) &&
      ::chown(path.c_str(), static_cast<uid_t>(-1), options.socket_gid) != 0) {
    int err = errno;
    ::unlink(path.c_str());
    throw_io_error(
        "cannot give control socket " + path + " to group " + std::to_string(options.socket_gid),
        err);
  }
  if (::listen(fd_.get(), options.backlog) != 0) {
    int err = errno;
    ::unlink(path.c_str());
    throw_io_error("cannot listen on control socket " + path, err);
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) ino_ = st.st_ino;
  bound_ = true;
}

Listener::Accepted Listener::accept(base::UniqueFd* client) {
  while (true) {
    int fd = ::accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      client->reset(fd);
      return Accepted::kClient;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      spdlog::warn("control: accept: {}; pausing accepts", std::strerror(errno));
      return Accepted::kOutOfDescriptors;
    }
    return Accepted::kEmpty;
  }
}

void Listener::close() {
  if (!fd_) return;
  fd_.reset();
  // Remove our socket file, but only if it is still ours.
  struct stat st {};
  if (bound_ && ::lstat(path_.c_str(), &st) == 0 && st.st_ino == ino_) ::unlink(path_.c_str());
}

}  // namespace leasefs::control

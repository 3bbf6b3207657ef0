// Everything a daemon serves for one root except the filesystem: the lock on
// .longrun, state, memory, ledger, audit, the service, the event bus and the
// control socket. The filesystem asks gate() before every mutation and tells
// reporter() what it refused and did.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/disk_reserve.hpp"
#include "gate/ask.hpp"
#include "gate/gate.hpp"
#include "gate/protected_paths.hpp"
#include "journal/journal.hpp"
#include "report/reporter.hpp"
#include "service/foreign_mount.hpp"
#include "signing/key_file.hpp"

namespace leasefs::daemon {

struct RuntimeOptions {
  std::string socket_path;  // empty: default_socket_path(root)
  std::vector<uid_t> approver_uids;
  std::vector<gid_t> approver_gids;
  // The control socket's mode after bind: owner and group may connect.
  mode_t socket_mode = 0660;
  // The socket's group (--socket-group); -1 keeps the daemon's.
  gid_t socket_gid = static_cast<gid_t>(-1);
  // --agent: the agent's group may read .longrun/status.md
  // (LongrunDir::share_with); nullopt: .longrun is the daemon's alone.
  std::optional<gid_t> agent_gid;
  // A connection with no request in progress is closed after this long.
  std::chrono::milliseconds idle_timeout{30'000};
  // A reply or watch event its client takes nothing of for this long drops it.
  std::chrono::milliseconds write_timeout{2'000};
  // Files closed after a leased write are hashed for the audit up to this size.
  uint64_t hash_limit_bytes = uint64_t{64} << 20;
  // fdatasync the audit log after every event.
  bool audit_fsync = true;
  // The per-turn journal (.longrun/journal); enabled = false: none is kept.
  journal::Options journal;
  // Paths no lease opens unless a grant names them (gate/protected_paths.hpp),
  // normalized. `.longrun/**` is protected whatever this holds.
  std::vector<std::string> protected_globs = gate::default_protected_globs();
  // Ask mode (gate/ask.hpp): how long a refused mutation waits for a person, in
  // milliseconds; 0 off. A task may override it (`leasectl ask`).
  int64_t ask_ms = 0;
  // The key that signs the audit's head at each turn's end (--signing-key;
  // signing/key_file.hpp). Missing or refused: heads go unsigned, and status
  // says why.
  std::string signing_key_path = signing::kDefaultKeyPath;
};

class Runtime {
 public:
  // Takes the root's lock (Error{root_locked} names the holder), loads state
  // (Error{state_corrupt}), revokes any lease left by a previous run, opens memory.
  // `root_fd` must reach the tree underneath (opened before any mount over it).
  Runtime(int root_fd, std::string root_path, RuntimeOptions options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  gate::Gate& gate() noexcept;
  // Where the filesystem's reports go: the pump, then the bus and the audit.
  report::Reporter& reporter() noexcept;
  // The journal the filesystem records into; nullptr when it is off.
  journal::Journal* journal() noexcept;
  // Ask mode's channel; the filesystem attaches its waiting room to it.
  gate::AskChannel& asks() noexcept;
  // Told of each path an undo changes, before and after (the filesystem's
  // kernel caches); nullptr detaches.
  void set_undo_touch(std::function<void(const std::string&)> fn);
  const std::string& socket_path() const noexcept;
  // A path to `name` in the root's .longrun/ that reaches the tree underneath a
  // mount (for the daemon's own log file).
  std::string longrun_path(std::string_view name) const;

  // The mounts over the tree no approver made, as the mount watch sees them
  // (daemon/mount_watch.hpp): the first ends every lease.
  void set_foreign_mounts(std::vector<service::ForeignMount> mounts);

  // The reserve of space kept for the control plane (base/disk_reserve.hpp);
  // the daemon starts its thread once the filesystem can sweep.
  base::DiskReserve& disk_reserve() noexcept;
  // The disk became full or has room again: status.md is rewritten.
  void disk_changed();

  // Adds a `file_plane` object to status (see Service::set_file_plane_status).
  void set_file_plane_status(std::function<nlohmann::json()> fn);

  // Binds the control socket and serves it on background threads; throws
  // Error{io_error} with a clear message when the socket cannot be created.
  void start_control();
  // Stops serving; idempotent. Called before the filesystem goes away.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace leasefs::daemon

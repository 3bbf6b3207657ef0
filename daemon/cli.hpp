// The daemon's commands: `leasefs mount`, `leasefs unmount`, `leasefs forget` and
// `leasefs keygen`.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace leasefs::daemon {

struct MountCommand {
  std::string root;
  std::string mountpoint;  // empty: over the root
  std::string socket;
  std::string socket_group;
  bool foreground = false;
  std::vector<uid_t> approver_uids;
  std::vector<gid_t> approver_gids;
  std::string agent;  // --agent USER: the recommended setup for an agent running as USER
  std::string log_level = "info";
  bool debug_fuse = false;
  bool no_io_uring = false;        // /dev/fuse even where io_uring is offered
  bool passthrough_reads = false;  // kernel passthrough for read-only opens
  // Mount over a root that processes already reach (cwd, root, fds, mappings);
  // those processes keep ungated access to the tree beneath (busy_root.hpp).
  bool allow_busy = false;
  // The per-turn journal: --journal=on|off and its bounds.
  std::string journal = "on";
  uint64_t journal_max_file_mb = 256;
  uint64_t journal_max_turn_mb = 4096;
  uint64_t journal_keep_turns = 50;
  uint64_t journal_keep_mb = 16384;
  // --protect GLOB (repeatable): paths no lease opens unless a grant names them
  // explicitly (gate/protected_paths.hpp); added to the defaults unless
  // --no-default-protect.
  std::vector<std::string> protect;
  bool no_default_protect = false;
  // --ask[=WAIT]: a refused mutation waits this long for a person; 0 off.
  int64_t ask_ms = 0;
  // -o OPTIONS (repeatable, comma-separated): standard mount options passed on
  // (fuse/mount_options.hpp).
  std::vector<std::string> mount_options;
  // --signing-key PATH: the key that signs the audit's head at each turn's end.
  std::string signing_key;
};

// `leasefs forget ROOT`: cli_forget.cpp.
struct ForgetCommand {
  std::string root;
  bool all = false;      // the record too: .longrun whole
  bool dry_run = false;  // say what would go
};

int run_mount(const MountCommand& cmd);
int run_unmount(const std::string& path, bool force);
int run_keygen(const std::string& path);
int run_forget(const ForgetCommand& cmd);

}  // namespace leasefs::daemon

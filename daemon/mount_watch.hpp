// The daemon watches the mount table for mounts on or beneath its tree that no
// approver made (service/foreign_mount.hpp). The kernel says who made a FUSE mount
// (user_id=), which any user may make over a directory it owns where /dev/fuse is
// open to all; every other kind of mount needs root, who is trusted.
//
// Every such mount counts whenever it was made: a mount id is reused as soon as it
// is freed, so "made before the daemon" cannot be told from the id. The ids seen
// before the daemon mounted serve only to find the daemon's own mount. The table
// is read again whenever poll() on /proc/self/mountinfo says it changed.
#pragma once

#include <sys/types.h>

#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/mountinfo.hpp"
#include "base/unique_fd.hpp"
#include "service/foreign_mount.hpp"

namespace leasefs::daemon {

// The mounts of `table` on, beneath or over one of `paths`, made by a FUSE
// user who is not in `trusted` (other mounts need root).
std::vector<service::ForeignMount> foreign_mounts(const std::vector<base::MountEntry>& table,
                                                  const std::vector<std::string>& paths,
                                                  const std::vector<uid_t>& trusted);

class MountWatch {
 public:
  using Report = std::function<void(std::vector<service::ForeignMount>)>;
  // Reads the table as it is now: made before the daemon mounts, so that a mount
  // made between its mount and start() is not taken for an old one.
  MountWatch(std::vector<std::string> paths, std::vector<uid_t> trusted);
  ~MountWatch();
  MountWatch(const MountWatch&) = delete;
  MountWatch& operator=(const MountWatch&) = delete;

  // Once the daemon is mounted: its own mount (the newest fuse.leasefs mount at
  // `mountpoint` made by this user) joins the old ones, the table is judged once,
  // and then after every change; `report` gets the whole list each time it changes.
  // Returns the daemon's own mount, if it was found.
  std::optional<base::MountEntry> start(const std::string& mountpoint, Report report);
  // Idempotent; may be called from several threads.
  void stop();

 private:
  void run();
  void judge();

  std::vector<std::string> paths_;
  std::vector<uid_t> trusted_;
  std::set<int> before_;
  base::UniqueFd table_fd_;
  base::UniqueFd wake_fd_;
  Report report_;
  std::vector<int> last_;  // mount ids last reported
  std::mutex stop_mu_;
  std::thread thread_;
};

}  // namespace leasefs::daemon

#include "daemon/file_plane_status.hpp"

#include <unistd.h>

#include "daemon/busy_root.hpp"

namespace leasefs::daemon {

nlohmann::json file_plane_status(const fuse::Filesystem& fs, const BusyWatch& busy,
                                 OpenFdCount& open_fds) {
  const fuse::FdBudget& budget = fuse::fd_budget();
  // A scan of every process's descriptors is left to a thread that may wait.
  if (busy.watch) base::would_block_here();
  const fuse::FdCache::Stats cache = fs.fd_cache().stats();
  nlohmann::json busy_json = nlohmann::json::array();
  if (busy.watch) {
    for (const BusyProcess& p : find_busy_processes(busy.root, busy.dev, ::getpid())) {
      busy_json.push_back({{"pid", p.pid}, {"command", p.command}, {"where", p.where}});
    }
  }
  nlohmann::json out = {
      {"fds",
       {{"open", open_fds.get()},
        {"limit", budget.limit()},
        {"reserve", fuse::FdBudget::kReserve},
        {"file_plane", budget.in_use()},
        {"file_plane_ceiling", budget.ceiling()},
        {"refused", budget.refused()}}},
      {"inode_cache",
       {{"open", cache.open},
        {"capacity", cache.capacity},
        {"kept_without_handle", cache.kept},
        {"hits", cache.hits},
        {"misses", cache.misses},
        {"evictions", cache.evictions}}},
      {"transport", fuse::transport_name(fs.transport().get())},
      {"passthrough",
       {{"on", fs.io_modes().enabled()}, {"open", fs.io_modes().passthrough_open()}}},
      {"inodes", fs.table().size()},
      {"busy_processes", busy_json}};
  if (!busy_json.empty()) {
    out["warning"] = std::to_string(busy_json.size()) +
                     " process(es) reached the tree before it was mounted over (--allow-busy) "
                     "and can still write it beneath the mount, without a lease";
  }
  return out;
}

}  // namespace leasefs::daemon

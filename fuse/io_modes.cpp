#include "fuse/io_modes.hpp"

#include <spdlog/spdlog.h>

namespace leasefs::fuse {

IoMode IoModes::open_writer(const Inode* inode, bool protected_file) {
  if (!enabled_) return IoMode::kUntracked;
  std::lock_guard lock(mu_);
  auto it = states_.find(inode);
  if (it != states_.end() && it->second.passthrough > 0) return IoMode::kRefused;
  if (protected_file) return IoMode::kUntracked;
  ++states_[inode].cached;
  return IoMode::kCached;
}

IoMode IoModes::open_reader([[maybe_unused]] fuse_req_t req, const Inode* inode,
                            [[maybe_unused]] int fd, bool protected_file, fuse_file_info* fi) {
  if (!enabled_) return IoMode::kUntracked;
  std::lock_guard lock(mu_);
  State& st = states_[inode];
#if LEASEFS_FUSE_PASSTHROUGH
  if (st.cached == 0) {
    if (st.backing_id == 0) st.backing_id = fuse_passthrough_open(req, fd);
    if (st.backing_id > 0) {
      ++st.passthrough;
      ++passthrough_total_;
      fi->backing_id = st.backing_id;
      // The backing file's reads are always fresh: no page cache of ours.
      fi->direct_io = 0;
      fi->keep_cache = 0;
      return IoMode::kPassthrough;
    }
    st.backing_id = 0;  // refused (a backing file system stacked too deep): not passed through
  }
#else
  (void)fi;
#endif
  if (protected_file) {
    if (st.cached == 0 && st.passthrough == 0) states_.erase(inode);
    return IoMode::kUntracked;
  }
  ++st.cached;
  return IoMode::kCached;
}

void IoModes::closed([[maybe_unused]] fuse_req_t req, const Inode* inode, IoMode mode) {
  if (mode != IoMode::kCached && mode != IoMode::kPassthrough) return;
  std::lock_guard lock(mu_);
  auto it = states_.find(inode);
  if (it == states_.end()) return;
  State& st = it->second;
  if (mode == IoMode::kCached && st.cached > 0) --st.cached;
  if (mode == IoMode::kPassthrough && st.passthrough > 0) {
    --st.passthrough;
    --passthrough_total_;
#if LEASEFS_FUSE_PASSTHROUGH
    // The kernel's open files hold the backing file themselves; the id is
    // only needed to open more of them.
    if (st.passthrough == 0 && st.backing_id > 0) {
      if (fuse_passthrough_close(req, st.backing_id) < 0) {
        spdlog::warn("closing passthrough backing id {} failed", st.backing_id);
      }
      st.backing_id = 0;
    }
#endif
  }
  if (st.cached == 0 && st.passthrough == 0) states_.erase(it);
}

size_t IoModes::passthrough_open() const {
  std::lock_guard lock(mu_);
  return passthrough_total_;
}

}  // namespace leasefs::fuse

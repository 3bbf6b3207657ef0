// The files this turn created as temporary siblings (policy: gate/temp_sibling.hpp),
// keyed by backing (st_dev, st_ino). Thin on purpose: it remembers which inodes
// are siblings, of which turn, under which name and for whom; the gate decides.
//
// Each entry pins its file with an O_PATH descriptor, so the backing filesystem
// cannot reuse the inode number for another file while the entry lives (a
// sibling deleted by a rename over it, or underneath, must not lend its identity
// to a later file). Bounded: past kMaxTempSiblings live entries a new one is
// refused (the create then fails like any out-of-scope create). The count is
// atomic so that the hot paths (every write) skip the lock while there are none.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/unique_fd.hpp"
#include "gate/decision.hpp"

namespace leasefs::fuse {

inline constexpr size_t kMaxTempSiblings = 256;

struct TempSibling {
  dev_t dev = 0;
  ino_t ino = 0;
  uint64_t turn = 0;
  std::string path;  // relative to the root, as created (for the leftover report)
  gate::Caller creator;
  std::shared_ptr<const base::UniqueFd> pin;  // O_PATH on the file
};

class TempSiblings {
 public:
  bool add(TempSibling sibling);  // false when full
  std::optional<TempSibling> find(dev_t dev, ino_t ino) const;
  void erase(dev_t dev, ino_t ino);
  // Removes and returns every sibling whose turn is not `open_turn` (all of them
  // when `open_turn` is empty).
  std::vector<TempSibling> close_except(std::optional<uint64_t> open_turn);
  bool empty() const noexcept { return count_.load(std::memory_order_acquire) == 0; }

 private:
  static uint64_t key(dev_t dev, ino_t ino) noexcept {
    return static_cast<uint64_t>(ino) * 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(dev);
  }
  mutable std::mutex mu_;
  std::unordered_multimap<uint64_t, TempSibling> by_key_;  // guarded by mu_
  std::atomic<size_t> count_{0};
};

}  // namespace leasefs::fuse

// The last name each file with several names was looked up by. The kernel
// keeps one inode for all of a file's names, and the daemon's descriptor for
// it was opened through whichever name it met first; once that name is
// removed, /proc shows it as "(deleted)" and a reopen by handle may lead back
// to it. The file is still where the caller reached it: this remembers that
// name, for path_of to try (it is used only when it still names the file).
//
// Bounded: when full it starts again empty (a hint lost is a path resolved
// the slow way, or left unresolved: refused, never widened).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace leasefs::fuse {

class LinkNames {
 public:
  static constexpr size_t kMaxEntries = 16384;

  void remember(dev_t dev, ino_t ino, std::string path) {
    std::lock_guard lock(mu_);
    if (names_.size() >= kMaxEntries) names_.clear();
    names_[{dev, ino}] = std::move(path);
  }
  std::optional<std::string> last(dev_t dev, ino_t ino) const {
    std::lock_guard lock(mu_);
    auto it = names_.find({dev, ino});
    if (it == names_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::pair<uint64_t, uint64_t>, std::string> names_;
};

}  // namespace leasefs::fuse

// The path a write through an open file is judged by, cached per file handle so
// that a write does not cost a readlink of /proc/self/fd/N.
//
// Valid only while no name in the tree changed: a names generation counts the
// changes. Every change to existing names that passes through the filesystem
// (rename in every flavor, unlink, rmdir, link) and every change the daemon makes
// underneath (undo, Filesystem::drop_cached) holds a NamesChanging for its
// duration, which bumps the generation before the change and again after it,
// before the caller is answered. Creating a name (create, mkdir, mknod, symlink)
// changes no existing path and does not bump.
//
// Ordering. A resolve reads the generation g, then reads the path, then stores
// (path, g); a lookup uses the entry only if the generation is still g. Take a
// change C that completed before a write W started. C's second bump happened
// before C's caller was answered, so before W read the generation: W reads some
// g' past it. An entry stored with g' was resolved after that bump, so after C's
// change, and shows it; an entry resolved earlier carries a smaller generation
// and is not used. So the gate is never asked with a path older than a change
// that completed before the write. (A change still in flight when W runs is
// concurrent with it: either path is a linearization, as without the cache.)
// The bump before the change only makes writes during it resolve afresh.
//
// The tree may change only through us when the mount covers the root and no
// process was left inside (FsOptions::stable_names, set by the daemon); in any
// other layout the path is resolved on every write.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace leasefs::fuse {

class NamesGeneration {
 public:
  uint64_t now() const noexcept { return gen_.load(std::memory_order_seq_cst); }
  void bump() noexcept { gen_.fetch_add(1, std::memory_order_seq_cst); }

 private:
  std::atomic<uint64_t> gen_{1};
};

// Held across one change to existing names (see the ordering above).
class NamesChanging {
 public:
  explicit NamesChanging(NamesGeneration& names) noexcept : names_(names) { names_.bump(); }
  ~NamesChanging() { names_.bump(); }
  NamesChanging(const NamesChanging&) = delete;
  NamesChanging& operator=(const NamesChanging&) = delete;

 private:
  NamesGeneration& names_;
};

// One handle's path, as resolved at a generation.
class CachedPath {
 public:
  // The path, if it was resolved at generation `gen`.
  std::optional<std::string> at(uint64_t gen) const {
    std::lock_guard lock(mu_);
    if (gen_ != gen) return std::nullopt;
    return path_;
  }
  // `gen` is the generation read before `path` was resolved.
  void store(uint64_t gen, std::string path) {
    std::lock_guard lock(mu_);
    if (gen < gen_) return;  // a racing resolve already stored a newer one
    gen_ = gen;
    path_ = std::move(path);
  }

 private:
  mutable std::mutex mu_;
  uint64_t gen_ = 0;  // 0: nothing stored (generations start at 1)
  std::string path_;
};

}  // namespace leasefs::fuse

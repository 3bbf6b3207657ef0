// The path a write through an open file is judged by, cached per file handle so
// that a write does not cost a readlink of /proc/self/fd/N.
//
// Valid only while no name in the tree changed: a names generation counts the
// changes. Every change to existing names that passes through the filesystem
// (rename in every flavor, unlink, rmdir, link) and every change the daemon makes
// underneath (undo, Filesystem::drop_cached, a temporary leftover taken out)
// holds a NamesChanging for its duration, which bumps the generation before the
// change and again after it, before the caller is answered. Creating a name
// (create, mkdir, mknod, symlink) changes no existing path and does not bump.
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
// Directories. A directory's path is made of directories' names only, so it is
// kept by a second generation, bumped after a change that may move or remove a
// directory (rmdir, undo, a rename that may have moved one), by the same rule.
// An unlink (unlinkat without AT_REMOVEDIR fails on a directory) and a link (no
// directory has two) never bump it; a rename does not when it saw a file at
// its old name and no directory at its new one, and no other change of names
// was under way, began or ended while it ran: a name turns from a file into a
// directory only by a removal, which is such a change, so the kinds it saw are
// the kinds it moved. An untar or a run of renames and unlinks in one
// directory then keeps that directory's path.
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
  // Every name's generation: a file's path is good while it stays.
  uint64_t now() const noexcept { return word_.load(std::memory_order_seq_cst) >> kShift; }
  // Directories' generation: a directory's path is good while it stays.
  uint64_t dirs() const noexcept { return dirs_.load(std::memory_order_seq_cst); }
  // A change made in one step that may have moved a directory (undo tells
  // before and after its change).
  void bump() noexcept {
    word_.fetch_add(kOne, std::memory_order_seq_cst);
    dirs_.fetch_add(1, std::memory_order_seq_cst);
  }

 private:
  friend class NamesChanging;
  // One word, so that a change can tell whether another overlapped it: the
  // generation above kShift, the changes under way below it (far fewer than
  // 2^20: one per FUSE worker and the daemon's own).
  static constexpr unsigned kShift = 20;
  static constexpr uint64_t kOne = uint64_t{1} << kShift;
  static constexpr uint64_t kUnderWay = kOne - 1;
  std::atomic<uint64_t> word_{kOne};
  std::atomic<uint64_t> dirs_{1};
};

// Held across one change to existing names (see the ordering above).
class NamesChanging {
 public:
  enum class Reach {
    kFiles,        // moves or removes no directory: unlink, link
    kDirectories,  // may: rmdir, rename
  };
  NamesChanging(NamesGeneration& names, Reach reach) noexcept
      : names_(names),
        reach_(reach),
        began_(names.word_.fetch_add(NamesGeneration::kOne + 1, std::memory_order_seq_cst) +
               NamesGeneration::kOne + 1) {}
  ~NamesChanging() {
    if (reach_ == Reach::kDirectories && !(only_files_ && alone())) {
      names_.dirs_.fetch_add(1, std::memory_order_seq_cst);
    }
    names_.word_.fetch_add(NamesGeneration::kOne - 1, std::memory_order_seq_cst);
  }
  NamesChanging(const NamesChanging&) = delete;
  NamesChanging& operator=(const NamesChanging&) = delete;

  // A rename, just before it runs: whether it saw a file (not absent) at its
  // old name and no directory at its new one (nor absent, for an exchange).
  void saw_only_files(bool only_files) noexcept { only_files_ = only_files; }

 private:
  // No other change was under way when this one began, and none began or ended since.
  bool alone() const noexcept {
    return (began_ & NamesGeneration::kUnderWay) == 1 &&
           names_.word_.load(std::memory_order_seq_cst) == began_;
  }

  NamesGeneration& names_;
  const Reach reach_;
  const uint64_t began_;  // the word just after this change began
  bool only_files_ = false;
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

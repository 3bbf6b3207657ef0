// Recording pre-images in the per-turn journal (journal/journal.hpp) just after
// the gate allowed a mutation and before it touches the tree. The turn is the
// one of the snapshot in force. A write through an open file costs one set
// lookup once its inode has a pre-image in this turn; only its first mutation
// resolves the path.
#include <fcntl.h>
#include <sys/stat.h>

#include "base/beneath.hpp"
#include "fuse/filesystem.hpp"
#include "journal/journal.hpp"

namespace leasefs::fuse {

namespace {

uint64_t current_turn(gate::Gate& gate) {
  auto snap = gate.snapshot();
  return snap->turn;
}

}  // namespace

int Filesystem::journal_inode(const Inode& inode, bool append) {
  if (!journal_ || !journal_->enabled()) return 0;
  const uint64_t turn = current_turn(gate_);
  if (journal_->inode_seen(turn, inode.dev, inode.ino, append)) return 0;
  if (append) return journal_->before_append(turn, cached_path_of(inode));
  if (int r = journal_->before(turn, cached_path_of(inode)); r < 0) return r;
  journal_->remember_inode(turn, inode.dev, inode.ino);
  return 0;
}

int Filesystem::journal_entry(const Inode& parent, std::string_view name) {
  if (!journal_ || !journal_->enabled()) return 0;
  return journal_->before(current_turn(gate_), path_of(parent, name));
}

int Filesystem::journal_path(std::string_view path, bool append) {
  if (!journal_ || !journal_->enabled()) return 0;
  const uint64_t turn = current_turn(gate_);
  return append ? journal_->before_append(turn, path) : journal_->before(turn, path);
}

int Filesystem::journal_rename(const gate::RenamePlan& plan) {
  if (!journal_ || !journal_->enabled()) return 0;
  // The names and kinds are the ones the gate judged a moment ago.
  return journal_->before_rename(current_turn(gate_), plan.from, plan.from_is_dir, plan.to,
                                 plan.target == gate::RenameTarget::kDirectory, plan.exchange);
}

void Filesystem::drop_cached(const std::string& path) noexcept {
  // Undo tells before it changes `path` and again once all is done: either bump
  // makes a cached path be resolved again (path_cache.hpp).
  names_.bump();
  note_name_dropped();
  try {
    const size_t slash = path.rfind('/');
    fuse_ino_t parent = FUSE_ROOT_ID;
    if (slash != std::string::npos) {
      base::UniqueFd d =
          base::open_beneath(root_.fd.get(), path.substr(0, slash), O_PATH | O_DIRECTORY);
      struct stat st {};
      if (!d || ::fstatat(d.get(), "", &st, AT_EMPTY_PATH) != 0) return;
      const Inode* dir = table_.find(st.st_dev, st.st_ino);
      if (!dir) return;  // the kernel knows nothing beneath it
      parent = reinterpret_cast<fuse_ino_t>(dir);
    }
    std::string name;
    base::UniqueFd d = base::open_parent(root_.fd.get(), path, &name);
    struct stat st {};
    if (d && ::fstatat(d.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (const Inode* obj = table_.find(st.st_dev, st.st_ino)) {
        pages_.now({reinterpret_cast<fuse_ino_t>(obj)});
      }
    }
    pages_.entry_now(parent, slash == std::string::npos ? path : path.substr(slash + 1));
  } catch (...) {
    // Best effort: a stale cache entry shows old metadata, it never lets a write past the gate.
  }
}

}  // namespace leasefs::fuse

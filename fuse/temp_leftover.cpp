// A temporary sibling that outlived its lease (gate/temp_sibling.hpp) leaves the
// tree: a grant for `src/a.conf` must not leave `src/evil.py` behind for a later
// `git add -A`. The file goes into its turn's journal, where `diff` shows it;
// without a journal it is deleted. Either way the kernel forgets the name.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "base/beneath.hpp"
#include "fuse/filesystem.hpp"
#include "journal/journal.hpp"

namespace leasefs::fuse {

namespace {

// Deletes `path` if it is still the file (dev, ino); 0 or -errno.
int unlink_if_same(int root_fd, const std::string& path, dev_t dev, ino_t ino) {
  std::string name;
  base::UniqueFd parent = base::open_parent(root_fd, path, &name);
  struct stat st {};
  if (!parent || ::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return -errno;
  }
  if (st.st_dev != dev || st.st_ino != ino) return -ESTALE;
  return ::unlinkat(parent.get(), name.c_str(), 0) == 0 ? 0 : -errno;
}

}  // namespace

void Filesystem::take_leftover(const TempSibling& s) noexcept {
  try {
    if (!gate::is_expressible(s.path)) return;
    const bool journaled = journal_ && journal_->enabled();
    int r = 0;
    {
      // A name changes underneath (a regular file's): cached paths are resolved
      // again once it is gone (path_cache.hpp).
      NamesChanging changing(names_, NamesChanging::Reach::kFiles);
      r = journaled ? journal_->keep_leftover(s.turn, s.path, s.dev, s.ino)
                    : unlink_if_same(root_.fd.get(), s.path, s.dev, s.ino);
    }
    note_name_dropped();
    if (r == -ENOENT || r == -ESTALE) return;  // unlinked or replaced: not a leftover
    reporter_.refusal(gate::Op::kCreate, s.path, s.creator, gate::DenyReason::kTemporaryLeftover);
    if (r < 0) {
      spdlog::error("temporary file {} outlived its turn {} and could not be taken out: {}", s.path,
                    s.turn, std::strerror(-r));
      return;
    }
    // Descriptors the agent kept on it now reach a blob in .longrun: from here
    // on, every operation through them is refused like any on .longrun.
    if (r == 1) table_.protect(s.dev, s.ino);
    spdlog::info("temporary file {} outlived its turn {}: {}", s.path, s.turn,
                 journaled ? "moved into the journal" : "deleted (no journal)");
    drop_cached(s.path);
    // A name of the file may remain (a link made under another grant): its
    // cached attributes (nlink) are stale too.
    if (const Inode* obj = table_.find(s.dev, s.ino)) {
      pages_.now({reinterpret_cast<fuse_ino_t>(obj)});
    }
  } catch (...) {
    // A leftover left in place is reported; nothing else is at stake here.
  }
}

}  // namespace leasefs::fuse

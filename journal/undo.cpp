#include "journal/undo.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "base/beneath.hpp"
#include "base/error.hpp"
#include "base/failpoint.hpp"
#include "base/inert_text.hpp"
#include "journal/kept_paths.hpp"
#include "journal/xattrs.hpp"

namespace leasefs::journal {

namespace {

size_t depth(const std::string& p) {
  return static_cast<size_t>(std::count(p.begin(), p.end(), '/'));
}

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw Error(Errc::kIoError, "undo: could not " + what + " " + base::quote_name(path) + ": " +
                                  std::strerror(err) +
                                  "; run the same undo again once the cause is fixed (it "
                                  "finishes what was started)");
}

// Removes `name` in `parent` whatever it is, a directory with all it holds.
void remove_any(int parent, const std::string& name, const std::string& shown) {
  struct stat st {};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(parent, name.c_str(), 0) != 0 && errno != ENOENT) fail("remove", shown, errno);
    return;
  }
  int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) fail("open", shown, errno);
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    fail("list", shown, errno);
  }
  std::vector<std::string> names;
  while (dirent* de = ::readdir(d)) {
    if (std::strcmp(de->d_name, ".") != 0 && std::strcmp(de->d_name, "..") != 0) {
      names.emplace_back(de->d_name);
    }
  }
  for (const auto& n : names) remove_any(::dirfd(d), n, shown + "/" + n);
  ::closedir(d);
  if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    fail("remove directory", shown, errno);
  }
}

void set_meta(int fd, const Entry& e) {
  for (const auto& [name, value] : e.xattrs) {
    const std::string v = unhex(value);
    ::fsetxattr(fd, xattr_name(name).c_str(), v.data(), v.size(), 0);
  }
  ::fchown(fd, e.uid, e.gid);
  ::fchmod(fd, e.mode & 07777);
  timespec ts[2] = {{e.atime_ns / 1'000'000'000, e.atime_ns % 1'000'000'000},
                    {e.mtime_ns / 1'000'000'000, e.mtime_ns % 1'000'000'000}};
  ::futimens(fd, ts);
}

void copy_blob(const Journal& journal, const Entry& e, int out, uint64_t length) {
  base::UniqueFd in(
      ::open(journal.blob_path(e.turn, e.blob).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!in) fail("read the journal's copy of", e.path, errno);
  if (::ftruncate(out, 0) != 0) fail("truncate", e.path, errno);
  char buf[1 << 16];
  off_t off = 0;
  for (;;) {
    ssize_t n = ::read(in.get(), buf, sizeof buf);
    if (n < 0) fail("read the journal's copy of", e.path, errno);
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::pwrite(out, buf + done, static_cast<size_t>(n - done), off);
      if (w < 0) fail("write", e.path, errno);
      done += w;
      off += w;
    }
  }
  if (off > 0 && static_cast<uint64_t>(off) > length &&
      ::ftruncate(out, static_cast<off_t>(length)) != 0) {
    fail("truncate", e.path, errno);
  }
  if (::fsync(out) != 0) fail("sync", e.path, errno);
}

// Puts a file back: in place when the same inode is still there (its other
// names see the old content again), through a temporary and a rename otherwise.
// `length`: the bytes of the blob to put back (a later turn's, for an appended-only entry).
void restore_file(const Journal& journal, int parent, const std::string& name, const Entry& e,
                  uint64_t length = UINT64_MAX) {
  struct stat st {};
  const bool there = ::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (e.appended) {
    // Only appended to in the turn: its first `size` bytes are those of the
    // file now, or of a later turn's pre-image of it (preimages.hpp).
    const AppendedBytes at = appended_bytes(journal, e);
    if (at.unknown) fail("put back (a later turn kept no copy of it)", e.path, ENODATA);
    if (!at.blob.empty()) {
      Entry from_later = e;
      from_later.appended = false;
      from_later.turn = at.turn;
      from_later.blob = at.blob;
      restore_file(journal, parent, name, from_later, e.size);
      return;
    }
    if (!there || !S_ISREG(st.st_mode) || st.st_ino != e.ino ||
        static_cast<uint64_t>(st.st_size) < e.size) {
      fail("put back (it was only appended to, and has been replaced outside the mount since)",
           e.path, ESTALE);
    }
    base::UniqueFd f(::openat(parent, name.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!f) fail("open", e.path, errno);
    if (::ftruncate(f.get(), static_cast<off_t>(e.size)) != 0) fail("truncate", e.path, errno);
    if (::fsync(f.get()) != 0) fail("sync", e.path, errno);
    set_meta(f.get(), e);
    return;
  }
  if (there && S_ISREG(st.st_mode) && st.st_ino == e.ino) {
    base::UniqueFd f(::openat(parent, name.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!f) fail("open", e.path, errno);
    copy_blob(journal, e, f.get(), length);
    set_meta(f.get(), e);
    return;
  }
  const std::string tmp = "." + name.substr(0, 200) + ".leasefs-undo";
  ::unlinkat(parent, tmp.c_str(), 0);
  base::UniqueFd f(
      ::openat(parent, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!f) fail("create a temporary for", e.path, errno);
  copy_blob(journal, e, f.get(), length);
  set_meta(f.get(), e);
  if (there && S_ISDIR(st.st_mode)) remove_any(parent, name, e.path);
  if (::renameat(parent, tmp.c_str(), parent, name.c_str()) != 0) fail("rename", e.path, errno);
}

void restore_symlink(int parent, const std::string& name, const Entry& e) {
  struct stat st {};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) {
      std::string buf(static_cast<size_t>(st.st_size) + 1, '\0');
      ssize_t n = ::readlinkat(parent, name.c_str(), buf.data(), buf.size());
      if (n >= 0 && std::string(buf.data(), static_cast<size_t>(n)) == e.target) return;
    }
    remove_any(parent, name, e.path);
  }
  if (::symlinkat(e.target.c_str(), parent, name.c_str()) != 0)
    fail("create symlink", e.path, errno);
  ::fchownat(parent, name.c_str(), e.uid, e.gid, AT_SYMLINK_NOFOLLOW);
  timespec ts[2] = {{e.atime_ns / 1'000'000'000, e.atime_ns % 1'000'000'000},
                    {e.mtime_ns / 1'000'000'000, e.mtime_ns % 1'000'000'000}};
  ::utimensat(parent, name.c_str(), ts, AT_SYMLINK_NOFOLLOW);
}

// Whether something is at `path` now (without following a symlink); its stat in `st`.
bool present(int root, const std::string& path, struct stat* st) {
  std::string name;
  base::UniqueFd parent = base::open_parent(root, path, &name);
  return parent && ::fstatat(parent.get(), name.c_str(), st, AT_SYMLINK_NOFOLLOW) == 0;
}

// Later turns that changed the same paths, except this undo's own work.
std::vector<UndoReport::Conflict> later_changes(const Journal& journal,
                                                const std::vector<uint64_t>& turns, uint64_t turn,
                                                const std::vector<Entry>& entries,
                                                const std::string& own) {
  std::set<std::string> paths;
  for (const auto& e : entries) paths.insert(e.path);
  std::vector<UndoReport::Conflict> conflicts;
  for (uint64_t t : turns) {
    if (t <= turn) continue;
    std::set<std::string> reported;
    for (const Entry& e : journal.entries(t)) {
      if (e.origin == own || e.is_fact() || !paths.contains(e.path) ||
          !reported.insert(e.path).second)
        continue;
      conflicts.push_back({e.path, t});
    }
  }
  return conflicts;
}

[[noreturn]] void refuse(uint64_t turn, const std::vector<UndoReport::Conflict>& conflicts) {
  std::string list;
  for (const auto& c : conflicts) {
    // Quoted: a name never starts a line of this message (base/inert_text.hpp).
    list += "\n  " + base::quote_name(c.path) + " (changed again in turn " +
            std::to_string(c.turn) + ")";
  }
  throw Error(Errc::kUndoConflict, "undo of turn " + std::to_string(turn) +
                                       " refused: later turns changed the same paths:" + list +
                                       "\nundo those turns first, name other paths, or pass "
                                       "--force to put these back anyway");
}

// What the undo puts back, removes, and cannot put back.
void plan(int root, const std::vector<Entry>& entries, UndoReport& report) {
  for (const Entry& e : entries) {
    struct stat st {};
    if (!e.undoable) {
      report.not_undoable.push_back({e.path, e.why});
    } else if (e.kind != EntryKind::kAbsent) {
      report.restored.push_back(e.path);
    } else if (present(root, e.path, &st)) {
      // Only what is there to remove (a temporary the turn made and removed is not).
      report.removed.push_back(e.path);
    }
  }
}

// 1. Journal what is there now, in the current turn, so the undo can be undone.
void journal_current(Journal& journal, const std::vector<Entry>& entries, const UndoRequest& req,
                     const std::string& own, const TouchFn& touch) {
  for (const Entry& e : entries) {
    if (!e.undoable) continue;
    struct stat st {};
    const bool there = present(journal.root_fd(), e.path, &st);
    const bool replaced_whole = there && (e.kind == EntryKind::kAbsent || kind_of(st) != e.kind);
    int r = replaced_whole ? journal.before_tree(req.current_turn, e.path, own)
                           : journal.before(req.current_turn, e.path, own);
    if (r < 0) fail("journal", e.path, -r);
    if (touch) touch(e.path);
  }
}

// 2. Deepest first (`order`): remove what the turn created, and what changed kind.
void remove_created(int root, const std::vector<const Entry*>& order) {
  for (const Entry* e : order) {
    std::string name;
    base::UniqueFd parent = base::open_parent(root, e->path, &name);
    if (!parent) continue;  // its directory is gone: nothing of it is left
    struct stat st {};
    if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (e->kind == EntryKind::kAbsent || (e->kind == EntryKind::kDir && !S_ISDIR(st.st_mode))) {
      remove_any(parent.get(), name, e->path);
    }
  }
}

// 3. Shallowest first (`order`): directories, then what they held.
void restore_names(const Journal& journal, const std::vector<const Entry*>& order) {
  for (const Entry* e : order) {
    if (e->kind == EntryKind::kAbsent) continue;
    std::string name;
    base::UniqueFd parent = base::open_parent(journal.root_fd(), e->path, &name);
    if (!parent) fail("reach the directory of", e->path, errno);
    if (e->kind == EntryKind::kDir) {
      if (::mkdirat(parent.get(), name.c_str(), 0700) != 0 && errno != EEXIST) {
        fail("create directory", e->path, errno);
      }
    } else if (e->kind == EntryKind::kFile) {
      restore_file(journal, parent.get(), name, *e);
    } else if (e->kind == EntryKind::kSymlink) {
      restore_symlink(parent.get(), name, *e);
    }
    base::failpoint("undo.after_one");
  }
}

// The names that lead to inode `ino` now: those of `group`, and any beside them.
std::vector<std::string> names_of_inode(int root, const std::vector<const Entry*>& group,
                                        uint64_t ino) {
  std::vector<std::string> names;
  for (const Entry* e : group) names.push_back(e->path);
  for (const Entry* e : group) {
    const size_t slash = e->path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : e->path.substr(0, slash);
    base::UniqueFd d = dir.empty()
                           ? base::UniqueFd(::openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC))
                           : base::open_beneath(root, dir, O_RDONLY | O_DIRECTORY);
    DIR* listing = d ? ::fdopendir(d.release()) : nullptr;
    if (!listing) continue;
    while (dirent* de = ::readdir(listing)) {
      if (de->d_ino == ino) names.push_back(dir.empty() ? de->d_name : dir + "/" + de->d_name);
    }
    ::closedir(listing);
  }
  return names;
}

// Links `e`'s name to the file at (first_parent, first_name), unless it is that file already.
void link_to(int root, const Entry& e, int first_parent, const std::string& first_name,
             ino_t first_ino) {
  std::string name;
  base::UniqueFd parent = base::open_parent(root, e.path, &name);
  struct stat st {};
  if (!parent) return;
  if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      st.st_ino == first_ino) {
    return;
  }
  const std::string tmp = "." + name.substr(0, 200) + ".leasefs-link";
  ::unlinkat(parent.get(), tmp.c_str(), 0);
  if (::linkat(first_parent, first_name.c_str(), parent.get(), tmp.c_str(), 0) != 0 ||
      ::renameat(parent.get(), tmp.c_str(), parent.get(), name.c_str()) != 0) {
    fail("link", e.path, errno);
  }
}

// 4. Names that were hard links of one file are links again: of the file
// itself when it is still there under another name (another name the turn
// journaled, or one beside it), else of the first name put back.
void relink(int root, const std::vector<const Entry*>& order) {
  std::map<uint64_t, std::vector<const Entry*>> by_ino;
  for (const Entry* e : order) {
    if (e->kind == EntryKind::kFile && e->nlink > 1) by_ino[e->ino].push_back(e);
  }
  for (const auto& [ino, group] : by_ino) {
    std::string anchor = group[0]->path;
    for (const auto& c : names_of_inode(root, group, ino)) {
      struct stat st {};
      if (present(root, c, &st) && st.st_ino == ino && S_ISREG(st.st_mode)) {
        anchor = c;
        break;
      }
    }
    if (group.size() < 2 && anchor == group[0]->path) continue;
    std::string first_name;
    base::UniqueFd first_parent = base::open_parent(root, anchor, &first_name);
    struct stat first {};
    if (!first_parent ||
        ::fstatat(first_parent.get(), first_name.c_str(), &first, AT_SYMLINK_NOFOLLOW) != 0) {
      continue;
    }
    for (const Entry* e : group) {
      if (e->path != anchor) link_to(root, *e, first_parent.get(), first_name, first.st_ino);
    }
  }
}

// 5. Deepest first (`order`): directory metadata last, once their contents stopped changing.
void restore_dir_meta(int root, const std::vector<const Entry*>& order) {
  for (const Entry* e : order) {
    if (e->kind != EntryKind::kDir) continue;
    base::UniqueFd d = base::open_beneath(root, e->path, O_RDONLY | O_DIRECTORY);
    if (d) set_meta(d.get(), *e);
  }
}

}  // namespace

UndoReport undo(Journal& journal, const UndoRequest& req, const TouchFn& touch) {
  const std::vector<uint64_t> turns = journal.turns();
  if (std::find(turns.begin(), turns.end(), req.turn) == turns.end()) {
    throw Error(Errc::kNotFound, "turn " + std::to_string(req.turn) +
                                     " has no journal (nothing was changed in it, or it is "
                                     "older than the retention); see `leasectl diff --turn N`");
  }
  const std::vector<Entry> entries = first_preimages(journal, req.turn, req.paths);
  const std::string own = "undo:" + std::to_string(req.turn);
  UndoReport report;
  report.turn = req.turn;
  report.dry_run = req.dry_run;
  report.conflicts = later_changes(journal, turns, req.turn, entries, own);
  if (!report.conflicts.empty() && !req.force) refuse(req.turn, report.conflicts);
  const int root = journal.root_fd();
  plan(root, entries, report);
  if (req.dry_run) return report;

  journal_current(journal, entries, req, own, touch);
  base::failpoint("undo.after_journal");
  std::vector<const Entry*> order;  // deepest first
  for (const Entry& e : entries) {
    if (e.undoable) order.push_back(&e);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Entry* a, const Entry* b) { return depth(a->path) > depth(b->path); });
  remove_created(root, order);
  base::failpoint("undo.after_remove");
  std::reverse(order.begin(), order.end());
  restore_names(journal, order);
  relink(root, order);
  std::reverse(order.begin(), order.end());
  restore_dir_meta(root, order);
  // Parents of what was created or removed got new times; those the turn
  // journaled were just put back above.
  for (const Entry& e : entries) {
    if (touch) touch(e.path);
  }
  report.applied = true;
  return report;
}

}  // namespace leasefs::journal

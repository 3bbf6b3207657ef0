#include "journal/diff.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "base/beneath.hpp"
#include "base/inert_text.hpp"
#include "base/no_atime.hpp"
#include "base/spawn.hpp"
#include "journal/kept_paths.hpp"
#include "journal/undo.hpp"
#include "journal/xattrs.hpp"

namespace leasefs::journal {

namespace {

constexpr size_t kMaxTextDiffBytes = size_t{1} << 20;  // larger contents get a summary

// The state of a path after the turn: a later pre-image, or the tree now.
struct After {
  EntryKind kind = EntryKind::kAbsent;
  uint32_t mode = 0, uid = 0, gid = 0;
  uint64_t size = 0, ino = 0;
  std::string target;
  std::map<std::string, std::string> xattrs;  // name -> hex value (xattrs.hpp)
  std::optional<std::string> content;         // read when needed (bounded)
  bool content_known = false;
};

std::string read_fd(int fd, size_t limit, bool* complete) {
  std::string out;
  char buf[1 << 16];
  *complete = true;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    if (out.size() + static_cast<size_t>(n) > limit) {
      *complete = false;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::optional<std::string> blob_content(const Journal& j, const Entry& e) {
  if (e.appended) {
    // Only appended to in its turn: its bytes are a later pre-image's, or the file's now.
    const AppendedBytes at = appended_bytes(j, e);
    if (at.unknown) return std::nullopt;
    if (!at.blob.empty()) {
      Entry later = e;
      later.appended = false;
      later.turn = at.turn;
      later.blob = at.blob;
      std::optional<std::string> s = blob_content(j, later);
      if (!s || s->size() < e.size) return std::nullopt;
      s->resize(e.size);
      return s;
    }
    std::string name;
    base::UniqueFd parent = base::open_parent(j.root_fd(), e.path, &name);
    base::UniqueFd f = parent ? base::openat_no_atime(parent.get(), name.c_str(),
                                                      O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                              : base::UniqueFd();
    struct stat st {};
    if (!f || ::fstat(f.get(), &st) != 0 || st.st_ino != e.ino || e.size > kMaxTextDiffBytes) {
      return std::nullopt;
    }
    bool complete = false;
    std::string s = read_fd(f.get(), kMaxTextDiffBytes, &complete);
    if (s.size() < e.size) return std::nullopt;
    s.resize(e.size);
    return s;
  }
  if (e.blob.empty()) return std::nullopt;
  base::UniqueFd fd(::open(j.blob_path(e.turn, e.blob).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return std::nullopt;
  bool complete = false;
  std::string s = read_fd(fd.get(), kMaxTextDiffBytes, &complete);
  if (!complete) return std::nullopt;
  return s;
}

// A later pre-image, or a leftover's blob (the file as it was taken out).
After after_from_entry(const Journal& j, const Entry& e) {
  After a;
  a.kind = e.kind == EntryKind::kLeftover ? EntryKind::kFile : e.kind;
  a.mode = e.mode;
  a.uid = e.uid;
  a.gid = e.gid;
  a.size = e.size;
  a.ino = e.ino;
  a.target = e.target;
  a.xattrs = e.xattrs;
  if (a.kind == EntryKind::kFile) {
    a.content = blob_content(j, e);
    a.content_known = true;
  }
  return a;
}

After after_from_tree(int root, const std::string& path) {
  After a;
  std::string name;
  base::UniqueFd parent = base::open_parent(root, path, &name);
  struct stat st {};
  if (!parent || ::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return a;
  a.mode = st.st_mode;
  a.uid = st.st_uid;
  a.gid = st.st_gid;
  a.size = static_cast<uint64_t>(st.st_size);
  a.ino = st.st_ino;
  if (S_ISREG(st.st_mode)) {
    a.kind = EntryKind::kFile;
    base::UniqueFd f =
        base::openat_no_atime(parent.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (f) {
      a.xattrs = read_xattrs(f.get());
      bool complete = false;
      std::string s = read_fd(f.get(), kMaxTextDiffBytes, &complete);
      if (complete) a.content = std::move(s);
    }
    a.content_known = true;
  } else if (S_ISDIR(st.st_mode)) {
    a.kind = EntryKind::kDir;
    base::UniqueFd f(
        ::openat(parent.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (f) a.xattrs = read_xattrs(f.get());
  } else if (S_ISLNK(st.st_mode)) {
    a.kind = EntryKind::kSymlink;
    std::string buf(static_cast<size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlinkat(parent.get(), name.c_str(), buf.data(), buf.size());
    if (n >= 0) a.target.assign(buf.data(), static_cast<size_t>(n));
  } else {
    a.kind = EntryKind::kOther;
  }
  return a;
}

bool readable_by(const std::optional<std::pair<uint32_t, uint32_t>>& reader, uint32_t mode,
                 uint32_t uid, uint32_t gid) {
  if (!reader) return true;
  if (reader->first == uid) return (mode & S_IRUSR) != 0;
  if (reader->second == gid) return (mode & S_IRGRP) != 0;
  return (mode & S_IROTH) != 0;
}

bool is_binary(const std::string& s) {
  return std::memchr(s.data(), '\0', std::min<size_t>(s.size(), 8192)) != nullptr;
}

// An xattr's value as a person reads it: quoted like a name when it is not
// plain text (xattrs.hpp keeps it in hex; --json has that exactly).
std::string xattr_value(const std::string* hex) {
  return hex ? base::quote_name(unhex(*hex)) : std::string("(none)");
}

std::string octal(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

// `diff -u` of two contents, through copies in a directory only the daemon reads.
std::string unified(const std::string& path, const std::string* before, const std::string* after) {
  char dir_tmpl[] = "/tmp/leasefs-diff-XXXXXX";
  if (!::mkdtemp(dir_tmpl))
    return "(diff unavailable: " + std::string(std::strerror(errno)) + ")\n";
  const std::string dir = dir_tmpl;
  auto put = [&](const char* name, const std::string* s) {
    std::string p = dir + "/" + name;
    base::UniqueFd fd(::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (fd && s) {
      for (size_t done = 0; done < s->size();) {
        ssize_t w = ::write(fd.get(), s->data() + done, s->size() - done);
        if (w <= 0) break;
        done += static_cast<size_t>(w);
      }
    }
    return p;
  };
  const std::string a = put("a", before), b = put("b", after);
  // The labels are the ---/+++ header lines: quoted as git quotes them.
  base::RunResult r =
      base::run_argv({"diff", "-u", "--label", before ? base::quote_name("a/" + path) : "/dev/null",
                      "--label", after ? base::quote_name("b/" + path) : "/dev/null", a, b});
  ::unlink(a.c_str());
  ::unlink(b.c_str());
  ::rmdir(dir.c_str());
  if (r.exit_code == 0) return {};
  if (r.exit_code != 1) return "(diff failed: " + r.output + ")\n";
  return r.output;
}

std::string kind_text(EntryKind kind) {
  return std::string(kind_name(kind));
}

// After the turn, for each entry: the first pre-image a later turn kept, else the tree now.
std::vector<After> afters_of(const Journal& journal, uint64_t turn,
                             const std::vector<Entry>& entries) {
  std::map<std::string, Entry> later;
  for (uint64_t t : journal.turns()) {
    if (t <= turn) continue;
    for (Entry& e : first_preimages(journal, t, {})) later.try_emplace(e.path, std::move(e));
  }
  std::vector<After> afters;
  for (const Entry& e : entries) {
    auto it = later.find(e.path);
    afters.push_back(it != later.end() ? after_from_entry(journal, it->second)
                                       : after_from_tree(journal.root_fd(), e.path));
  }
  return afters;
}

// The turn's renames and the temporary files it took out of the tree. A rename
// is a name that went away after a rename fact, whose inode is now under the
// name it was renamed to (followed through later renames in the turn).
class Moves {
 public:
  Moves(const Journal& journal, uint64_t turn, const std::vector<Entry>& entries,
        const std::vector<After>& afters)
      : entries_(entries) {
    for (size_t i = 0; i < entries.size(); ++i) index_of_[entries[i].path] = i;
    std::map<std::string, std::string> moved;  // from -> to, as the turn did it
    for (Entry& e : journal.entries(turn)) {
      if (e.kind == EntryKind::kRename) moved[e.path] = e.target;
      if (e.kind == EntryKind::kLeftover) leftovers_.insert_or_assign(e.path, std::move(e));
    }
    for (const auto& [from, first_to] : moved) {
      auto fi = index_of_.find(from);
      if (fi == index_of_.end()) continue;
      std::string to = first_to;
      for (int hops = 0; hops < 64 && moved.contains(to) && moved.at(to) != from; ++hops) {
        to = moved.at(to);
      }
      auto ti = index_of_.find(to);
      if (ti == index_of_.end()) continue;
      const Entry& b = entries[fi->second];
      if (b.kind == EntryKind::kAbsent || afters[fi->second].kind != EntryKind::kAbsent) continue;
      const After& a = afters[ti->second];
      if (a.kind == EntryKind::kAbsent || a.ino != b.ino) continue;
      renamed_to_[fi->second] = ti->second;
      targets_.insert(ti->second);
      if (b.kind == EntryKind::kDir) moved_dirs_.emplace_back(from, to);
    }
  }

  // The entry of the name entry `i` was renamed to, or null.
  const Entry* renamed_to(size_t i) const {
    auto r = renamed_to_.find(i);
    return r == renamed_to_.end() ? nullptr : &entries_[r->second];
  }
  // Shown as the rename from its old name, not on its own.
  bool is_rename_target(size_t i) const { return targets_.contains(i); }
  // What a renamed directory held moved with it: not shown name by name.
  // A name under the new place whose twin under the old one existed before the
  // turn came along; one created there afterwards is shown as created.
  bool inside_moved_dir(const std::string& p) const {
    for (const auto& [from, to] : moved_dirs_) {
      if (p != from && path_within(p, from)) return true;
      if (p != to && path_within(p, to)) {
        auto twin = index_of_.find(from + p.substr(to.size()));
        if (twin != index_of_.end() && entries_[twin->second].kind != EntryKind::kAbsent)
          return true;
      }
    }
    return false;
  }
  // The leftover fact of `path`, or null.
  const Entry* leftover(const std::string& path) const {
    auto it = leftovers_.find(path);
    return it == leftovers_.end() ? nullptr : &it->second;
  }

 private:
  const std::vector<Entry>& entries_;
  std::map<std::string, size_t> index_of_;
  std::map<size_t, size_t> renamed_to_;  // deleted index -> created index
  std::set<size_t> targets_;
  std::vector<std::pair<std::string, std::string>> moved_dirs_;
  std::map<std::string, Entry> leftovers_;  // temporary files taken out of the tree
};

// One path's change being described: the reply's part and the text's lines.
struct Shown {
  DiffChange change;
  // Every name in the lines is quoted (a newline in it never starts a line);
  // `change` keeps the exact bytes.
  std::vector<std::string> lines;
  std::optional<std::string> before_text;  // a file's content before, when read
  bool content_changed = false;
};

void describe_xattrs(const DiffRequest& req, const Entry& b, const After& a,
                     const std::string& name, Shown& s) {
  std::set<std::string> names;
  for (const auto* m : {&b.xattrs, &a.xattrs}) {
    for (const auto& [k, v] : *m) names.insert(k);
  }
  for (const auto& k : names) {
    auto bi = b.xattrs.find(k), ai = a.xattrs.find(k);
    const std::string* bv = bi == b.xattrs.end() ? nullptr : &bi->second;
    const std::string* av = ai == a.xattrs.end() ? nullptr : &ai->second;
    if (bv && av && *bv == *av) continue;
    const std::string real = xattr_name(k);  // a name kept in hex, as it is on disk
    // A non-approver sees a value only where it could read it natively: a
    // user.* attribute of a file its mode lets it read, before and after
    // (the daemon read trusted.* and security.* as root).
    const bool shown =
        !req.reader ||
        (real.rfind("user.", 0) == 0 &&
         (b.kind == EntryKind::kAbsent || readable_by(req.reader, b.mode, b.uid, b.gid)) &&
         (a.kind == EntryKind::kAbsent || readable_by(req.reader, a.mode, a.uid, a.gid)));
    if (!shown) {
      s.change.xattrs[k] = {false, std::nullopt, std::nullopt};
      s.lines.push_back("xattr " + base::quote_name(real) + " of " + name +
                        " changed (value not shown: not readable by uid " +
                        std::to_string(req.reader->first) + ")");
      continue;
    }
    s.change.xattrs[k] = {true, bv ? std::optional(*bv) : std::nullopt,
                          av ? std::optional(*av) : std::nullopt};
    s.lines.push_back("xattr " + base::quote_name(real) + " of " + name + " " + xattr_value(bv) +
                      " -> " + xattr_value(av));
  }
}

// A path of the same kind before and after: its mode, owner, xattrs, target
// and content. False when nothing but its times changed.
bool describe_modified(const Journal& journal, const DiffRequest& req, const Entry& b,
                       const After& a, const std::string& name, Shown& s) {
  DiffChange& c = s.change;
  c.what = DiffChange::What::kModified;
  if ((b.mode & 07777) != (a.mode & 07777) && b.kind != EntryKind::kSymlink) {
    c.mode = DiffChange::Pair{octal(b.mode), octal(a.mode)};
    s.lines.push_back("mode " + name + " " + c.mode->first + " -> " + c.mode->second);
  }
  if (b.uid != a.uid || b.gid != a.gid) {
    c.owner = DiffChange::Pair{std::to_string(b.uid) + ":" + std::to_string(b.gid),
                               std::to_string(a.uid) + ":" + std::to_string(a.gid)};
    s.lines.push_back("owner " + name + " " + c.owner->first + " -> " + c.owner->second);
  }
  if (b.xattrs != a.xattrs) describe_xattrs(req, b, a, name, s);
  if (b.kind == EntryKind::kSymlink && b.target != a.target) {
    c.target = DiffChange::Pair{b.target, a.target};
    s.lines.push_back("symlink " + name + " -> " + base::quote_name(b.target) + " now -> " +
                      base::quote_name(a.target));
  }
  if (b.kind == EntryKind::kFile) {
    s.before_text = blob_content(journal, b);
    s.content_changed = !s.before_text || !a.content || *s.before_text != *a.content;
  }
  return s.content_changed || !s.lines.empty();
}

// What became of pre-image `b` (now `a`): false when nothing shows, a temporary
// created and removed within the turn, or a path only touched (times only).
// `renamed`: the entry of its new name; `left`: its leftover fact, when taken out.
bool describe(const Journal& journal, const DiffRequest& req, const Entry& b, const After& a,
              const Entry* renamed, const Entry* left, Shown& s) {
  DiffChange& c = s.change;
  c.path = b.path;
  const std::string name = base::quote_name(b.path);
  if (renamed) {
    c.what = DiffChange::What::kRenamed;
    c.to = renamed->path;
    s.lines.push_back("renamed " + name + " -> " + base::quote_name(c.to));
  } else if (b.kind == EntryKind::kAbsent && a.kind == EntryKind::kAbsent) {
    return false;  // created and removed within the turn (a temporary)
  } else if (left) {
    c.what = DiffChange::What::kLeftover;
    c.kind = a.kind;
    c.blob = left->blob;
    s.lines.push_back("temporary file " + name + " (mode " + octal(a.mode) +
                      ") outlived its lease: taken out of the tree into the journal");
    s.content_changed = true;
  } else if (b.kind == EntryKind::kAbsent) {
    c.what = DiffChange::What::kCreated;
    c.kind = a.kind;
    const bool symlink = a.kind == EntryKind::kSymlink;
    s.lines.push_back("created " + kind_text(a.kind) + " " + name +
                      (symlink ? " -> " + base::quote_name(a.target) : "") +
                      (!symlink ? " (mode " + octal(a.mode) + ")" : ""));
    s.content_changed = a.kind == EntryKind::kFile;
  } else if (a.kind == EntryKind::kAbsent) {
    c.what = DiffChange::What::kDeleted;
    c.kind = b.kind;
    s.lines.push_back("deleted " + kind_text(b.kind) + " " + name);
    if (b.kind == EntryKind::kFile) {
      s.before_text = blob_content(journal, b);
      s.content_changed = true;
    }
  } else if (a.kind != b.kind) {
    c.what = DiffChange::What::kReplaced;
    s.lines.push_back("replaced " + kind_text(b.kind) + " " + name + " with a " +
                      kind_text(a.kind));
  } else if (!describe_modified(journal, req, b, a, name, s)) {
    return false;  // touched, not changed (times only)
  }
  if (!b.undoable) {
    c.undoable = false;
    c.why = b.why;
    s.lines.push_back("not undoable: " + name + " (" + base::inert(b.why) + ")");
  }
  return true;
}

// A changed content: as a unified diff in `text` (after the lines so far), or
// as one line saying why not (unreadable by the reader, too large, binary).
void show_content(const DiffRequest& req, const Entry& b, const After& a, const std::string& name,
                  Shown& s, std::string& text) {
  const std::string* before_content = s.before_text ? &*s.before_text : nullptr;
  const std::string* after_content =
      a.kind == EntryKind::kFile && a.content ? &*a.content : nullptr;
  const bool before_known = b.kind != EntryKind::kFile || before_content;
  const bool after_known = a.kind != EntryKind::kFile || after_content;
  s.change.content = true;
  if ((b.kind == EntryKind::kFile && !readable_by(req.reader, b.mode, b.uid, b.gid)) ||
      (a.kind == EntryKind::kFile && !readable_by(req.reader, a.mode, a.uid, a.gid))) {
    s.lines.push_back("content of " + name + " changed (not shown: not readable by uid " +
                      std::to_string(req.reader->first) + ")");
  } else if (!before_known || !after_known) {
    s.lines.push_back("content of " + name + " changed (too large to show: " +
                      std::to_string(b.size) + " -> " + std::to_string(a.size) + " bytes)");
  } else if ((before_content && is_binary(*before_content)) ||
             (after_content && is_binary(*after_content))) {
    s.change.binary = true;
    if (b.kind == EntryKind::kFile && a.kind == EntryKind::kFile)
      s.lines.push_back("Binary file " + name + " changed (" +
                        std::to_string(before_content ? before_content->size() : 0) + " -> " +
                        std::to_string(after_content ? after_content->size() : 0) + " bytes)");
  } else if (!req.stat) {
    for (const auto& l : s.lines) text += l + "\n";
    s.lines.clear();
    text += unified(b.path, b.kind == EntryKind::kFile ? before_content : nullptr,
                    a.kind == EntryKind::kFile ? after_content : nullptr);
  }
}

}  // namespace

std::string_view what_name(DiffChange::What what) noexcept {
  switch (what) {
    case DiffChange::What::kRenamed:
      return "renamed";
    case DiffChange::What::kLeftover:
      return "leftover";
    case DiffChange::What::kCreated:
      return "created";
    case DiffChange::What::kDeleted:
      return "deleted";
    case DiffChange::What::kReplaced:
      return "replaced";
    case DiffChange::What::kModified:
      return "modified";
  }
  return "modified";
}

DiffReport diff(const Journal& journal, const DiffRequest& req) {
  const std::vector<Entry> entries = first_preimages(journal, req.turn, req.paths);
  const std::vector<After> afters = afters_of(journal, req.turn, entries);
  const Moves moves(journal, req.turn, entries, afters);
  DiffReport report;
  report.turn = req.turn;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& b = entries[i];
    if (moves.is_rename_target(i) || moves.inside_moved_dir(b.path)) continue;
    // Created in the turn and gone, but kept: a temporary file that outlived its
    // lease, shown as it was when it was taken out.
    const Entry* left = moves.leftover(b.path);
    const bool taken = left && b.kind == EntryKind::kAbsent && afters[i].kind == EntryKind::kAbsent;
    const After left_after = taken ? after_from_entry(journal, *left) : After{};
    const After& a = taken ? left_after : afters[i];
    Shown s;
    if (!describe(journal, req, b, a, moves.renamed_to(i), taken ? left : nullptr, s)) continue;
    const std::string name = base::quote_name(b.path);
    if (s.content_changed && (b.kind == EntryKind::kFile || a.kind == EntryKind::kFile)) {
      show_content(req, b, a, name, s, report.text);
    }
    if (req.stat && s.lines.empty()) {
      s.lines.push_back(std::string(what_name(s.change.what)) + " " + name);
    }
    for (const auto& l : s.lines) report.text += l + "\n";
    report.changes.push_back(std::move(s.change));
  }
  return report;
}

}  // namespace leasefs::journal

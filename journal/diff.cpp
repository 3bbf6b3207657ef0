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
#include "base/spawn.hpp"
#include "journal/kept_paths.hpp"
#include "journal/undo.hpp"
#include "journal/xattrs.hpp"

namespace leasefs::journal {

namespace {

using nlohmann::json;

constexpr size_t kMaxTextDiffBytes = size_t{1} << 20;  // larger contents get a summary

// The state of a path after the turn: a later pre-image, or the tree now.
struct After {
  std::string kind = "absent";
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
  a.kind = e.kind == "leftover" ? "file" : e.kind;
  a.mode = e.mode;
  a.uid = e.uid;
  a.gid = e.gid;
  a.size = e.size;
  a.ino = e.ino;
  a.target = e.target;
  a.xattrs = e.xattrs;
  if (a.kind == "file") {
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
    a.kind = "file";
    base::UniqueFd f(::openat(parent.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (f) {
      a.xattrs = read_xattrs(f.get());
      bool complete = false;
      std::string s = read_fd(f.get(), kMaxTextDiffBytes, &complete);
      if (complete) a.content = std::move(s);
    }
    a.content_known = true;
  } else if (S_ISDIR(st.st_mode)) {
    a.kind = "dir";
    base::UniqueFd f(
        ::openat(parent.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (f) a.xattrs = read_xattrs(f.get());
  } else if (S_ISLNK(st.st_mode)) {
    a.kind = "symlink";
    std::string buf(static_cast<size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlinkat(parent.get(), name.c_str(), buf.data(), buf.size());
    if (n >= 0) a.target.assign(buf.data(), static_cast<size_t>(n));
  } else {
    a.kind = "other";
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
std::string unified(const Journal& j, const std::string& path, const std::string* before,
                    const std::string* after) {
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
  (void)j;
  if (r.exit_code == 0) return {};
  if (r.exit_code != 1) return "(diff failed: " + r.output + ")\n";
  return r.output;
}

}  // namespace

json diff(const Journal& journal, const DiffRequest& req) {
  std::vector<Entry> entries = first_preimages(journal, req.turn, req.paths);
  // After the turn: the first pre-image a later turn kept, else the tree now.
  std::map<std::string, Entry> later;
  for (uint64_t t : journal.turns()) {
    if (t <= req.turn) continue;
    for (Entry& e : journal.entries(t)) {
      if (!e.is_fact()) later.try_emplace(e.path, std::move(e));
    }
  }
  std::vector<After> afters;
  for (const Entry& e : entries) {
    auto it = later.find(e.path);
    afters.push_back(it != later.end() ? after_from_entry(journal, it->second)
                                       : after_from_tree(journal.root_fd(), e.path));
  }
  // A rename is a name that went away after a rename fact, whose inode is now
  // under the name it was renamed to (followed through later renames in the turn).
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < entries.size(); ++i) index_of[entries[i].path] = i;
  std::map<std::string, std::string> moved;  // from -> to, as the turn did it
  std::map<std::string, Entry> leftovers;    // temporary files taken out of the tree
  for (Entry& e : journal.entries(req.turn)) {
    if (e.kind == "rename") moved[e.path] = e.target;
    if (e.kind == "leftover") leftovers.insert_or_assign(e.path, std::move(e));
  }
  std::map<size_t, size_t> renamed_to;  // deleted index -> created index
  std::vector<std::pair<std::string, std::string>> moved_dirs;
  for (const auto& [from, first_to] : moved) {
    auto fi = index_of.find(from);
    if (fi == index_of.end()) continue;
    std::string to = first_to;
    for (int hops = 0; hops < 64 && moved.contains(to) && moved[to] != from; ++hops) to = moved[to];
    auto ti = index_of.find(to);
    if (ti == index_of.end()) continue;
    const Entry& b = entries[fi->second];
    if (b.kind == "absent" || afters[fi->second].kind != "absent") continue;
    if (afters[ti->second].kind == "absent" || afters[ti->second].ino != b.ino) continue;
    renamed_to[fi->second] = ti->second;
    if (b.kind == "dir") moved_dirs.emplace_back(from, to);
  }
  std::set<size_t> rename_targets;
  for (const auto& [from, to] : renamed_to) rename_targets.insert(to);
  // What a renamed directory held moved with it: not shown name by name.
  // A name under the new place whose twin under the old one existed before the
  // turn came along; one created there afterwards is shown as created.
  auto inside_moved_dir = [&](const std::string& p) {
    for (const auto& [from, to] : moved_dirs) {
      if (p != from && path_within(p, from)) return true;
      if (p != to && path_within(p, to)) {
        auto twin = index_of.find(from + p.substr(to.size()));
        if (twin != index_of.end() && entries[twin->second].kind != "absent") return true;
      }
    }
    return false;
  };

  json changes = json::array();
  std::string text;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& b = entries[i];
    if (rename_targets.contains(i) || inside_moved_dir(b.path)) continue;
    // Created in the turn and gone, but kept: a temporary file that outlived its
    // lease, shown as it was when it was taken out.
    auto left = leftovers.find(b.path);
    const bool taken = left != leftovers.end() && b.kind == "absent" && afters[i].kind == "absent";
    const After left_after = taken ? after_from_entry(journal, left->second) : After{};
    const After& a = taken ? left_after : afters[i];
    json c = {{"path", b.path}};
    // Every name in the text is quoted (a newline in it never starts a line);
    // `changes` keeps the exact bytes.
    const std::string name = base::quote_name(b.path);
    std::vector<std::string> lines;
    const std::string* before_content = nullptr;
    std::optional<std::string> before_text;
    bool content_changed = false;
    if (auto r = renamed_to.find(i); r != renamed_to.end()) {
      const std::string& to = entries[r->second].path;
      c["change"] = "renamed";
      c["to"] = to;
      lines.push_back("renamed " + name + " -> " + base::quote_name(to));
    } else if (b.kind == "absent" && a.kind == "absent") {
      continue;  // created and removed within the turn (a temporary)
    } else if (taken) {
      c["change"] = "leftover";
      c["kind"] = a.kind;
      c["blob"] = left->second.blob;
      lines.push_back("temporary file " + name + " (mode " + octal(a.mode) +
                      ") outlived its lease: taken out of the tree into the journal");
      content_changed = true;
    } else if (b.kind == "absent") {
      c["change"] = "created";
      c["kind"] = a.kind;
      lines.push_back("created " + a.kind + " " + name +
                      (a.kind == "symlink" ? " -> " + base::quote_name(a.target) : "") +
                      (a.kind != "symlink" ? " (mode " + octal(a.mode) + ")" : ""));
      content_changed = a.kind == "file";
    } else if (a.kind == "absent") {
      c["change"] = "deleted";
      c["kind"] = b.kind;
      lines.push_back("deleted " + b.kind + " " + name);
      if (b.kind == "file") {
        before_text = blob_content(journal, b);
        content_changed = true;
      }
    } else if (a.kind != b.kind) {
      c["change"] = "replaced";
      lines.push_back("replaced " + b.kind + " " + name + " with a " + a.kind);
    } else {
      c["change"] = "modified";
      if ((b.mode & 07777) != (a.mode & 07777) && b.kind != "symlink") {
        c["mode"] = {octal(b.mode), octal(a.mode)};
        lines.push_back("mode " + name + " " + octal(b.mode) + " -> " + octal(a.mode));
      }
      if (b.uid != a.uid || b.gid != a.gid) {
        c["owner"] = {std::to_string(b.uid) + ":" + std::to_string(b.gid),
                      std::to_string(a.uid) + ":" + std::to_string(a.gid)};
        lines.push_back("owner " + name + " " + c["owner"][0].get<std::string>() + " -> " +
                        c["owner"][1].get<std::string>());
      }
      if (b.xattrs != a.xattrs) {
        json changed = json::object();
        std::set<std::string> names;
        for (const auto* m : {&b.xattrs, &a.xattrs}) {
          for (const auto& [k, v] : *m) names.insert(k);
        }
        for (const auto& k : names) {
          auto bi = b.xattrs.find(k), ai = a.xattrs.find(k);
          const std::string* bv = bi == b.xattrs.end() ? nullptr : &bi->second;
          const std::string* av = ai == a.xattrs.end() ? nullptr : &ai->second;
          if (bv && av && *bv == *av) continue;
          // A non-approver sees a value only where it could read it natively: a
          // user.* attribute of a file its mode lets it read, before and after
          // (the daemon read trusted.* and security.* as root).
          const bool shown =
              !req.reader ||
              (k.rfind("user.", 0) == 0 &&
               (b.kind == "absent" || readable_by(req.reader, b.mode, b.uid, b.gid)) &&
               (a.kind == "absent" || readable_by(req.reader, a.mode, a.uid, a.gid)));
          if (!shown) {
            changed[k] = "changed (value not shown)";
            lines.push_back("xattr " + base::quote_name(k) + " of " + name +
                            " changed (value not shown: not readable by uid " +
                            std::to_string(req.reader->first) + ")");
            continue;
          }
          changed[k] = {bv ? json(*bv) : json(), av ? json(*av) : json()};
          lines.push_back("xattr " + base::quote_name(k) + " of " + name + " " + xattr_value(bv) +
                          " -> " + xattr_value(av));
        }
        c["xattrs"] = std::move(changed);  // values in hex, exactly
      }
      if (b.kind == "symlink" && b.target != a.target) {
        c["target"] = {b.target, a.target};
        lines.push_back("symlink " + name + " -> " + base::quote_name(b.target) + " now -> " +
                        base::quote_name(a.target));
      }
      if (b.kind == "file") {
        before_text = blob_content(journal, b);
        content_changed = !before_text || !a.content || *before_text != *a.content;
      }
      if (!content_changed && lines.empty()) continue;  // touched, not changed (times only)
    }
    if (!b.undoable) {
      c["undoable"] = false;
      c["why"] = b.why;
      lines.push_back("not undoable: " + name + " (" + base::inert(b.why) + ")");
    }
    if (before_text) before_content = &*before_text;
    if (content_changed && (b.kind == "file" || a.kind == "file")) {
      const std::string* after_content = a.kind == "file" && a.content ? &*a.content : nullptr;
      const bool before_known = b.kind != "file" || before_content;
      const bool after_known = a.kind != "file" || after_content;
      c["content"] = true;
      if ((b.kind == "file" && !readable_by(req.reader, b.mode, b.uid, b.gid)) ||
          (a.kind == "file" && !readable_by(req.reader, a.mode, a.uid, a.gid))) {
        lines.push_back("content of " + name + " changed (not shown: not readable by uid " +
                        std::to_string(req.reader->first) + ")");
      } else if (!before_known || !after_known) {
        lines.push_back("content of " + name + " changed (too large to show: " +
                        std::to_string(b.size) + " -> " + std::to_string(a.size) + " bytes)");
      } else if ((before_content && is_binary(*before_content)) ||
                 (after_content && is_binary(*after_content))) {
        c["binary"] = true;
        if (b.kind == "file" && a.kind == "file")
          lines.push_back("Binary file " + name + " changed (" +
                          std::to_string(before_content ? before_content->size() : 0) + " -> " +
                          std::to_string(after_content ? after_content->size() : 0) + " bytes)");
      } else if (!req.stat) {
        text += [&] {
          std::string head;
          for (const auto& l : lines) head += l + "\n";
          return head;
        }();
        lines.clear();
        text += unified(journal, b.path, b.kind == "file" ? before_content : nullptr,
                        a.kind == "file" ? after_content : nullptr);
      }
    }
    if (req.stat && lines.empty()) lines.push_back(c.value("change", std::string()) + " " + name);
    for (const auto& l : lines) text += l + "\n";
    changes.push_back(std::move(c));
  }
  return {{"turn", req.turn}, {"changes", changes}, {"text", text}};
}

}  // namespace leasefs::journal

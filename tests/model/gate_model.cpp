#include "tests/model/gate_model.hpp"

#include <linux/fs.h>

#include <cerrno>
#include <regex>

namespace leasefs::test::model {

namespace {

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string join(const std::string& dir, const std::string& rel) {
  return dir.empty() ? rel : dir + "/" + rel;
}

bool within(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

std::string normalized(std::string p) {
  for (;;) {
    if (p.starts_with("/")) {
      p.erase(0, 1);
    } else if (p.starts_with("./")) {
      p.erase(0, 2);
    } else {
      return p;
    }
  }
}

// DESIGN.md's glob table as a regular expression.
std::string glob_regex(std::string p) {
  p = normalized(std::move(p));
  bool dir = false;
  while (p.ends_with('/')) {
    p.pop_back();
    dir = true;
  }
  std::string out;
  for (size_t i = 0; i < p.size();) {
    const bool at_name_start = i == 0 || p[i - 1] == '/';
    if (p.compare(i, 3, "**/") == 0 && at_name_start) {
      out += "(.*/)?";  // any number of whole names, none included
      i += 3;
    } else if (p.compare(i, 2, "**") == 0 && i + 2 == p.size() && i > 0 && p[i - 1] == '/') {
      out.pop_back();  // `dir/**`: dir itself and everything beneath
      out += "(/.*)?";
      i += 2;
    } else if (p.compare(i, 2, "**") == 0) {
      out += ".*";
      i += 2;
    } else if (p[i] == '*') {
      out += "[^/]*";
      ++i;
    } else if (p[i] == '?') {
      out += "[^/]";
      ++i;
    } else {
      if (std::string("\\^$.|+()[]{}").find(p[i]) != std::string::npos) out += '\\';
      out += p[i];
      ++i;
    }
  }
  if (dir) out += "(/.*)?";
  return out;
}

bool has_wildcard(const std::string& s) {
  return s.find_first_of("*?") != std::string::npos;
}

// Leading names of a glob without a wildcard.
size_t literal_depth(const std::string& glob) {
  std::string g = normalized(glob);
  size_t depth = 0, start = 0;
  while (start < g.size()) {
    size_t slash = g.find('/', start);
    std::string name =
        g.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (name.empty() || has_wildcard(name)) break;
    ++depth;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return depth;
}

bool is_longrun(const std::string& path) {
  return path == ".longrun" || path.starts_with(".longrun/");
}

bool is_index_lock(const std::string& path) {
  return name_of(path) == "index.lock" && name_of(dir_of(path)) == ".git";
}

}  // namespace

Broken broken_from_name(const std::string& name) {
  if (name == "op_classes") return Broken::kOpClasses;
  if (name == "replace_unlinks") return Broken::kReplaceUnlinks;
  if (name == "siblings") return Broken::kSiblings;
  return Broken::kNone;
}

bool model_glob(const std::string& pattern, const std::string& path) {
  return std::regex_match(path, std::regex(glob_regex(pattern)));
}

const char* op_kind_name(OpKind kind) {
  static const char* const names[] = {
      "create",     "trunc",    "append", "keep",     "write_kept",  "trunc_kept", "chmod_kept",
      "close_kept", "truncate", "unlink", "rmdir",    "rename",      "link",       "symlink",
      "chmod",      "utimes",   "mkdir",  "setxattr", "removexattr", "fallocate",  "copy_range"};
  return names[static_cast<int>(kind)];
}

void GateModel::add(const std::string& path, Kind kind) {
  tree_[path] = {kind, next_file_++};
}

const Node* GateModel::at(const std::string& path) const {
  auto it = tree_.find(path);
  return it == tree_.end() ? nullptr : &it->second;
}

std::vector<std::string> GateModel::names_of(uint64_t file) const {
  std::vector<std::string> out;
  for (const auto& [path, node] : tree_) {
    if (node.file == file) out.push_back(path);
  }
  return out;
}

std::vector<std::string> GateModel::subtree(const std::string& dir) const {
  std::vector<std::string> out;
  for (const auto& [path, node] : tree_) {
    if (within(path, dir)) out.push_back(path.substr(dir.size() + 1));
  }
  return out;
}

std::optional<uint64_t> GateModel::kept(int slot) const {
  auto it = kept_.find(slot);
  if (it == kept_.end()) return std::nullopt;
  return it->second;
}

// --- the lease -------------------------------------------------------------

const std::string* GateModel::protecting(const std::string& path) const {
  for (const std::string& g : protected_) {
    if (model_glob(g, path)) return &g;
  }
  return nullptr;
}

// "Names explicitly": a pattern without wildcard, or one at least as deep as the
// protecting glob's literal part (which must be at least one name deep).
bool GateModel::names_explicitly(const std::string& pattern, const std::string& path,
                                 const std::string& guard) const {
  if (!model_glob(pattern, path)) return false;
  const std::string p = normalized(pattern);
  if (!has_wildcard(p) && !p.ends_with('/')) return true;
  const size_t g = literal_depth(guard);
  return g >= 1 && literal_depth(p) >= g;
}

bool GateModel::covers(const MGrant& g, const std::string& path) const {
  if (g.paths.empty()) return true;
  if (path.empty()) return false;  // the root itself: no glob covers it
  for (const std::string& p : g.paths) {
    if (model_glob(p, path)) return true;
  }
  return false;
}

bool GateModel::decide(uint8_t cls, const std::string& path) const {
  if (is_longrun(path) || !state_.in_progress) return false;
  const std::string* guard = protecting(path);
  for (const MGrant& g : state_.grants) {
    if (broken_ != Broken::kOpClasses && (g.ops & cls) == 0) continue;
    if (!covers(g, path)) continue;
    if (guard) {
      if (g.paths.empty()) continue;  // a grant with no --path names nothing
      bool named = false;
      for (const std::string& p : g.paths) named = named || names_explicitly(p, path, *guard);
      if (!named) continue;
    }
    return true;
  }
  return false;
}

// --- temporary siblings ----------------------------------------------------

bool GateModel::sibling_live(uint64_t turn) const {
  if (broken_ == Broken::kSiblings || !state_.in_progress || turn != state_.turn) return false;
  for (const MGrant& g : state_.grants) {
    if (!g.paths.empty() && (g.ops & kW)) return true;
  }
  return false;
}

// The directory part of a glob, or for one that reaches below it (`dir/`,
// `dir/**`), every directory it matches.
bool GateModel::reaches_into(const std::string& pattern, const std::string& dir) const {
  const std::string p = normalized(pattern);
  std::string trimmed = p;
  while (trimmed.ends_with('/')) trimmed.pop_back();
  if (p.ends_with('/') || p.ends_with("**")) {
    if (model_glob(p, dir)) return true;
  }
  if (p.ends_with('/')) return model_glob(trimmed, dir);
  return model_glob(dir_of(p), dir);
}

bool GateModel::may_make_sibling(const std::string& path) const {
  if (is_longrun(path) || protecting(path) || !sibling_live(state_.turn)) return false;
  if (is_index_lock(path)) return true;
  for (const MGrant& g : state_.grants) {
    if (g.paths.empty() || !(g.ops & kW)) continue;
    for (const std::string& p : g.paths) {
      if (reaches_into(p, dir_of(path))) return true;
    }
  }
  return false;
}

std::optional<uint64_t> GateModel::sibling_of(uint64_t file) const {
  auto it = siblings_.find(file);
  if (it == siblings_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> GateModel::publish(const MState& state) {
  state_ = state;
  // An expired grant is in force no more: for the model, it is gone.
  std::erase_if(state_.grants, [](const MGrant& g) { return g.expired; });
  std::vector<std::string> gone;
  for (auto it = siblings_.begin(); it != siblings_.end();) {
    if (sibling_live(it->second)) {
      ++it;
      continue;
    }
    // Still under the name it was created with: out of the tree.
    const std::string& name = sibling_names_[it->first];
    if (const Node* n = at(name); n && n->file == it->first) {
      gone.push_back(name);
      remove_name(name);
      if (names_of(it->first).empty()) longrun_.insert(it->first);
    }
    sibling_names_.erase(it->first);
    it = siblings_.erase(it);
  }
  return gone;
}

// --- effects ---------------------------------------------------------------

bool GateModel::rename_allowed(const Op& op) const {
  const Node* from = at(op.a);
  const Node* to = at(op.b);
  if (auto turn = sibling_of(from->file); turn && !(op.flags & RENAME_EXCHANGE)) {
    // A temporary sibling goes only onto a file the lease covers for writing, or
    // a new name it covers for creating (.git/index.lock only onto the index beside it).
    if (!sibling_live(*turn)) return false;
    if (is_index_lock(op.a)) return op.b == join(dir_of(op.a), "index");
    return decide(to ? kW : kC, op.b);
  }
  if (!decide(kR, op.a) || !decide(kR, op.b)) return false;
  if (from->kind == Kind::kDir) {
    for (const std::string& rel : subtree(op.a)) {
      if (!decide(kR, join(op.a, rel)) || !decide(kR, join(op.b, rel))) return false;
    }
  }
  if (op.flags & RENAME_EXCHANGE) {
    if (to->kind == Kind::kDir) {
      for (const std::string& rel : subtree(op.b)) {
        if (!decide(kR, join(op.b, rel)) || !decide(kR, join(op.a, rel))) return false;
      }
    }
    return true;
  }
  if (to && broken_ != Broken::kReplaceUnlinks && !decide(kU, op.b)) return false;
  return true;
}

// The kernel names a link's source by inode: with hard links, it is judged at
// one of the file's names.
bool GateModel::link_allowed(const std::string& from, const std::string& to, bool* either) const {
  if (!decide(kC, to)) return false;
  size_t yes = 0;
  const std::vector<std::string> names = names_of(at(from)->file);
  for (const std::string& source : names) {
    bool ok = decide(kC, source);
    for (uint8_t cls : {kW, kA}) ok = ok && !(decide(cls, to) && !decide(cls, source));
    yes += ok ? 1 : 0;
  }
  *either = yes != 0 && yes != names.size();
  return yes == names.size();
}

// A kept descriptor is judged at a name its file has now; when the names are
// judged differently, either answer is the documented one.
bool GateModel::kept_allowed(uint8_t cls, uint64_t file, bool* either) const {
  if (in_longrun(file)) return false;
  if (auto turn = sibling_of(file); turn && sibling_live(*turn)) return true;
  std::vector<std::string> names = names_of(file);
  size_t yes = 0;
  for (const std::string& n : names) yes += decide(cls, n) ? 1 : 0;
  *either = yes != 0 && yes != names.size();
  return yes == names.size();
}

// --- the kernel's own answers ------------------------------------------------

int GateModel::parent_error(const std::string& path) const {
  const std::string dir = dir_of(path);
  if (dir.empty()) return 0;
  const Node* d = at(dir);
  if (!d) return parent_error(dir) ? parent_error(dir) : ENOENT;
  if (d->kind == Kind::kSymlink) return ENOENT;  // every symlink dangles
  return d->kind == Kind::kDir ? 0 : ENOTDIR;
}

int GateModel::kernel_error(const Op& op) const {
  if (op.kind == OpKind::kWriteKept || op.kind == OpKind::kTruncKept ||
      op.kind == OpKind::kChmodKept || op.kind == OpKind::kCloseKept) {
    return 0;
  }
  if (int e = parent_error(op.a)) return e;
  const Node* a = at(op.a);
  switch (op.kind) {
    case OpKind::kCreate:
    case OpKind::kMkdir:
    case OpKind::kSymlink:
      return a ? EEXIST : 0;
    case OpKind::kTrunc:
    case OpKind::kAppend:
    case OpKind::kKeep:
    case OpKind::kTruncate:
    case OpKind::kFallocate:
    case OpKind::kCopyRange:
      if (!a || a->kind == Kind::kSymlink) return ENOENT;  // symlinks dangle
      return a->kind == Kind::kDir ? EISDIR : 0;
    case OpKind::kChmod:
    case OpKind::kSetxattr:
    case OpKind::kRemovexattr:
      return !a || a->kind == Kind::kSymlink ? ENOENT : 0;
    case OpKind::kUtimes:
      return a ? 0 : ENOENT;
    case OpKind::kUnlink:
      if (!a) return ENOENT;
      return a->kind == Kind::kDir ? EISDIR : 0;
    case OpKind::kRmdir:
      if (!a) return ENOENT;
      return a->kind == Kind::kDir ? 0 : ENOTDIR;
    case OpKind::kLink: {
      if (!a) return ENOENT;
      if (int e = parent_error(op.b)) return e;
      if (at(op.b)) return EEXIST;
      return a->kind == Kind::kDir ? EPERM : 0;
    }
    case OpKind::kRename: {
      // Both parents are resolved before either name is looked up.
      if (int e = parent_error(op.b)) return e;
      if (!a) return ENOENT;
      const Node* b = at(op.b);
      const bool exchange = op.flags & RENAME_EXCHANGE;
      if (exchange && !b) return ENOENT;
      if ((op.flags & RENAME_NOREPLACE) && b) return EEXIST;
      if (within(op.b, op.a)) return EINVAL;  // into its own subtree
      if (within(op.a, op.b)) return exchange ? EINVAL : ENOTEMPTY;
      if (b && b->file == a->file) return -1;  // the same file: nothing to do
      if (b && !exchange) {
        if (a->kind == Kind::kDir && b->kind != Kind::kDir) return ENOTDIR;
        if (a->kind != Kind::kDir && b->kind == Kind::kDir) return EISDIR;
      }
      return 0;
    }
    default:
      return 0;
  }
}

Expect GateModel::expect(const Op& op) const {
  Expect e;
  if (int k = kernel_error(op)) {
    if (k == -1) {
      e.allowed = true;  // success, the file system never asked
    } else {
      e.kernel_errno = k;
    }
    return e;
  }
  const Node* a = at(op.a);
  auto on_sibling = [&](uint8_t cls) {
    if (!(cls == kW || cls == kA || cls == kU)) return false;
    auto turn = sibling_of(a->file);
    return turn && sibling_live(*turn);
  };
  // Calls the kernel sends by inode (opens, setattr, xattrs) are judged at a name
  // the file has, which with hard links may not be the name called.
  auto by_name = [&](uint8_t cls) {
    if (on_sibling(cls)) return true;
    if (a->kind == Kind::kDir) return decide(cls, op.a);
    return kept_allowed(cls, a->file, &e.either);
  };
  switch (op.kind) {
    case OpKind::kCreate:
      e.allowed = decide(kC, op.a) || may_make_sibling(op.a);
      break;
    case OpKind::kMkdir:
    case OpKind::kSymlink:
      e.allowed = decide(kC, op.a);
      break;
    case OpKind::kTrunc:
    case OpKind::kAppend:
    case OpKind::kKeep:
    case OpKind::kTruncate:
    case OpKind::kFallocate:
    case OpKind::kCopyRange:
      e.allowed = by_name(kW);
      break;
    case OpKind::kChmod:
    case OpKind::kUtimes:
    case OpKind::kSetxattr:
    case OpKind::kRemovexattr:
      e.allowed = by_name(kA);
      break;
    case OpKind::kUnlink:
    case OpKind::kRmdir:
      e.allowed = decide(kU, op.a) || on_sibling(kU);  // by name
      break;
    case OpKind::kLink:
      e.allowed = link_allowed(op.a, op.b, &e.either);
      break;
    case OpKind::kRename:
      e.allowed = rename_allowed(op);
      break;
    case OpKind::kWriteKept:
    case OpKind::kTruncKept:
      e.allowed = kept_allowed(kW, *kept(op.slot), &e.either);
      break;
    case OpKind::kChmodKept:
      e.allowed = kept_allowed(kA, *kept(op.slot), &e.either);
      break;
    case OpKind::kCloseKept:
      e.allowed = true;
      break;
  }
  return e;
}

// --- following the tree ------------------------------------------------------

void GateModel::remove_name(const std::string& path) {
  tree_.erase(path);
  for (auto it = tree_.begin(); it != tree_.end();) {
    it = within(it->first, path) ? tree_.erase(it) : std::next(it);
  }
}

void GateModel::apply(const Op& op) {
  switch (op.kind) {
    case OpKind::kCreate: {
      const bool sibling = !decide(kC, op.a);
      const uint64_t file = next_file_++;
      tree_[op.a] = {Kind::kFile, file};
      if (sibling) {
        siblings_[file] = state_.turn;
        sibling_names_[file] = op.a;
      }
      break;
    }
    case OpKind::kMkdir:
      tree_[op.a] = {Kind::kDir, next_file_++};
      break;
    case OpKind::kSymlink:
      tree_[op.a] = {Kind::kSymlink, next_file_++};
      break;
    case OpKind::kKeep:
      kept_[op.slot] = at(op.a)->file;
      break;
    case OpKind::kCloseKept:
      kept_.erase(op.slot);
      break;
    case OpKind::kUnlink:
    case OpKind::kRmdir: {
      const uint64_t file = at(op.a)->file;
      remove_name(op.a);
      if (names_of(file).empty()) {
        siblings_.erase(file);
        sibling_names_.erase(file);
      }
      break;
    }
    case OpKind::kLink:
      tree_[op.b] = *at(op.a);
      break;
    case OpKind::kRename: {
      const Node from = *at(op.a);
      if (const Node* to = at(op.b); to && to->file == from.file) break;
      std::map<std::string, Node> moved_a, moved_b;
      for (const auto& [path, node] : tree_) {
        if (path == op.a || within(path, op.a)) moved_a[op.b + path.substr(op.a.size())] = node;
        if (path == op.b || within(path, op.b)) moved_b[op.a + path.substr(op.b.size())] = node;
      }
      std::optional<uint64_t> replaced;
      if (const Node* to = at(op.b)) replaced = to->file;
      remove_name(op.a);
      remove_name(op.b);
      tree_.insert(moved_a.begin(), moved_a.end());
      if (op.flags & RENAME_EXCHANGE) {
        tree_.insert(moved_b.begin(), moved_b.end());
      } else if (replaced && names_of(*replaced).empty()) {
        siblings_.erase(*replaced);
        sibling_names_.erase(*replaced);
      }
      // A sibling renamed onto a covered path is the file there now.
      if (siblings_.count(from.file) && !(op.flags & RENAME_EXCHANGE)) {
        siblings_.erase(from.file);
        sibling_names_.erase(from.file);
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace leasefs::test::model

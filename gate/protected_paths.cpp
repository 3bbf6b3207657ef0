#include "gate/protected_paths.hpp"

#include "gate/decision.hpp"
#include "gate/glob.hpp"

namespace leasefs::gate {

namespace {

std::string_view trim_front(std::string_view p) noexcept {
  while (true) {
    if (p.starts_with('/')) {
      p.remove_prefix(1);
    } else if (p.starts_with("./")) {
      p.remove_prefix(2);
    } else {
      return p;
    }
  }
}

bool segment_has_wildcard(std::string_view seg) noexcept {
  return seg.find_first_of("*?") != std::string_view::npos;
}

// The leading wildcard-free segments of `pattern`, joined by '/'.
std::string_view literal_prefix(std::string_view pattern) noexcept {
  pattern = trim_front(pattern);
  size_t end = 0;  // end of the literal prefix
  size_t pos = 0;
  while (pos < pattern.size()) {
    size_t slash = pattern.find('/', pos);
    size_t seg_end = slash == std::string_view::npos ? pattern.size() : slash;
    if (segment_has_wildcard(pattern.substr(pos, seg_end - pos))) break;
    if (seg_end > pos) end = seg_end;
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return pattern.substr(0, end);
}

}  // namespace

std::string normalize_protected_glob(std::string_view glob, std::string* why) {
  auto fail = [&](std::string text) {
    if (why) *why = std::move(text);
    return std::string();
  };
  std::string_view g = trim_front(glob);
  if (g.empty()) return fail("an empty glob protects nothing; name a path relative to the root");
  if (g.size() >= kMaxPathLength) return fail("the glob is longer than PATH_MAX");
  size_t pos = 0;
  while (pos <= g.size()) {
    size_t slash = g.find('/', pos);
    size_t end = slash == std::string_view::npos ? g.size() : slash;
    std::string_view seg = g.substr(pos, end - pos);
    if (seg == ".." || seg == ".") {
      return fail("'.' and '..' segments are not allowed; write the path relative to the root");
    }
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return std::string(g);
}

bool has_wildcard(std::string_view pattern) noexcept {
  pattern = trim_front(pattern);
  return pattern.ends_with('/') || segment_has_wildcard(pattern);
}

size_t literal_depth(std::string_view pattern) noexcept {
  std::string_view prefix = literal_prefix(pattern);
  if (prefix.empty()) return 0;
  size_t depth = 1;
  for (char c : prefix) {
    if (c == '/') ++depth;
  }
  return depth;
}

const std::string* protecting_glob(const std::vector<std::string>& globs,
                                   std::string_view path) noexcept {
  if (globs.empty() || path.empty() || !is_expressible(path)) return nullptr;
  for (const std::string& glob : globs) {
    if (glob_match(glob, path)) return &glob;
  }
  return nullptr;
}

bool names_explicitly(std::string_view pattern, std::string_view protect) noexcept {
  if (!has_wildcard(pattern)) return true;
  const size_t depth = literal_depth(protect);
  return depth > 0 && literal_depth(pattern) >= depth;
}

bool grant_names(const Grant& grant, std::string_view path, std::string_view protect) noexcept {
  for (const std::string& pattern : grant.paths) {
    if (glob_match(pattern, path) && names_explicitly(pattern, protect)) return true;
  }
  return false;
}

bool may_hold_protected(const std::vector<std::string>& globs, std::string_view dir) noexcept {
  if (globs.empty()) return false;
  if (dir.empty() || !is_expressible(dir)) return true;
  for (const std::string& glob : globs) {
    std::string_view lit = literal_prefix(glob);
    if (lit.empty() || lit == dir) return true;
    // The glob's literal part lies beneath `dir`, or `dir` beneath it.
    if (lit.size() > dir.size() && lit.starts_with(dir) && lit[dir.size()] == '/') return true;
    if (dir.size() > lit.size() && dir.starts_with(lit) && dir[lit.size()] == '/') return true;
  }
  return false;
}

}  // namespace leasefs::gate

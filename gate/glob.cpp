// Iterative matcher with backtracking to the last star, the classic wildcard
// algorithm extended with one rule: a single `*` (or `?`) never crosses '/',
// while `**` does. A pattern "dir/**" also matches "dir" itself, as users expect,
// and a pattern ending in '/' ("dir/", "src/*/") names directories: it matches a
// path that is such a directory or lies beneath one. The full rules are in
// DESIGN.md ("Path globs").
#include "gate/glob.hpp"

namespace leasefs::gate {

namespace {

bool match(std::string_view p, std::string_view s) noexcept {
  size_t pi = 0, si = 0;
  // Backtrack points for the last `*` and the last `**`.
  size_t star_p = std::string_view::npos, star_s = 0;
  size_t dstar_p = std::string_view::npos, dstar_s = 0;
  bool dstar_slash = false;  // "**/": a retry must start at a component boundary
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      if (pi + 1 < p.size() && p[pi + 1] == '*') {
        pi += 2;
        // "**/" may match zero components.
        dstar_slash = pi < p.size() && p[pi] == '/';
        if (dstar_slash) ++pi;
        dstar_p = pi;
        dstar_s = si;
        star_p = std::string_view::npos;
        continue;
      }
      star_p = ++pi;
      star_s = si;
      continue;
    }
    if (pi < p.size() && (p[pi] == s[si] || (p[pi] == '?' && s[si] != '/'))) {
      ++pi;
      ++si;
      continue;
    }
    if (star_p != std::string_view::npos && s[star_s] != '/') {
      pi = star_p;
      si = ++star_s;
      continue;
    }
    if (dstar_p != std::string_view::npos) {
      if (dstar_slash) {
        size_t slash = s.find('/', dstar_s);
        if (slash == std::string_view::npos) return false;
        dstar_s = slash + 1;
      } else {
        ++dstar_s;
      }
      pi = dstar_p;
      si = dstar_s;
      star_p = std::string_view::npos;
      continue;
    }
    return false;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) noexcept {
  while (!pattern.empty() && pattern.front() == '/') pattern.remove_prefix(1);
  while (pattern.starts_with("./")) pattern.remove_prefix(2);
  if (pattern.ends_with('/')) {
    while (pattern.ends_with('/')) pattern.remove_suffix(1);
    if (pattern.empty()) return false;
    // The path itself, or any of its ancestors, is a directory the pattern names.
    for (size_t end = path.size(); end != std::string_view::npos && end > 0;
         end = path.rfind('/', end - 1)) {
      if (match(pattern, path.substr(0, end))) return true;
    }
    return false;
  }
  if (match(pattern, path)) return true;
  // "dir/**" covers the directory itself (mkdir dir, rmdir dir).
  if (pattern.ends_with("/**")) return pattern.substr(0, pattern.size() - 3) == path;
  return false;
}

}  // namespace leasefs::gate

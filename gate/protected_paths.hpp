// Protected paths (`leasefs mount --protect GLOB`): paths no lease opens unless a
// grant names them explicitly. A broad grant (`--path '**'`, `.git/**`, or no
// `--path` at all) does not open them; `.longrun/` stays closed to every grant
// (I5, decision.hpp).
//
// "Names explicitly": one of the grant's path patterns matches the path, and the
// pattern's leading wildcard-free segments reach at least as deep as the
// protecting glob's (`.git/hooks/**` needs a pattern that starts with the literal
// `.git/hooks/`, e.g. `.git/hooks/pre-commit` or `.git/hooks/*`). A pattern with
// no wildcard at all (and no trailing `/`) names what it matches; a protecting
// glob that begins with a wildcard (`**/.env`) is named only by such a pattern.
// The rules and their table are in DESIGN.md ("Protected paths").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gate/grant.hpp"

namespace leasefs::gate {

// What every mount protects unless told otherwise.
inline const std::vector<std::string>& default_protected_globs() {
  static const std::vector<std::string> globs = {".git/hooks/**", ".git/config"};
  return globs;
}

// The glob as the gate keeps it (no leading `/` or `./`). Empty when the glob is
// unusable (empty, too long, or with `.`/`..` segments); `why` then says what is
// wrong.
std::string normalize_protected_glob(std::string_view glob, std::string* why);

// How many leading `/`-separated segments of `pattern` hold no `*` or `?`. The
// segment a trailing `/` ends is counted; the trailing `/` itself makes the
// pattern a wildcard (it covers everything beneath).
size_t literal_depth(std::string_view pattern) noexcept;
bool has_wildcard(std::string_view pattern) noexcept;

// The first of `globs` that matches `path`, or nullptr. An inexpressible path
// (decision.hpp) matches none.
const std::string* protecting_glob(const std::vector<std::string>& globs,
                                   std::string_view path) noexcept;

// Whether grant pattern `pattern` names paths that `protect` protects.
bool names_explicitly(std::string_view pattern, std::string_view protect) noexcept;

// Whether `grant` names `path` (protected by `protect`) explicitly.
bool grant_names(const Grant& grant, std::string_view path, std::string_view protect) noexcept;

// Whether something beneath directory `dir` (or `dir` itself) could be protected
// by one of `globs`: used when a directory's subtree could not be listed in full.
bool may_hold_protected(const std::vector<std::string>& globs, std::string_view dir) noexcept;

}  // namespace leasefs::gate

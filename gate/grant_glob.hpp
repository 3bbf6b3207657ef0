// A grant's --path as a person (or an agent's request) spells it, checked and put
// in the one form the gate matches. The approver must read exactly what the
// grant covers: a spelling that reaches outside the root ("..", an absolute path
// elsewhere) or uses glob syntax the matcher does not have (braces, brackets,
// "***") is refused, never read some other way. Rules: DESIGN.md, "Path globs".
#pragma once

#include <string>
#include <string_view>

namespace leasefs::gate {

struct GrantGlob {
  std::string glob;     // relative to the root, no "." or empty components
  std::string problem;  // not empty: refused, and why (with what is supported)
};

// `root` is the daemon's root (absolute, canonical): an absolute `text` under it
// is made relative; any other absolute path is outside and refused.
GrantGlob normalize_grant_glob(std::string_view text, std::string_view root);

}  // namespace leasefs::gate

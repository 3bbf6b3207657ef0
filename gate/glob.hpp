// Path globs for grants: `*` and `?` stay within one path component, `**` spans
// any number of components; a trailing '/' names a directory and everything in it.
// Paths are relative to the root, '/'-separated. Exact rules: DESIGN.md, "Path globs".
#pragma once

#include <string_view>

namespace leasefs::gate {

bool glob_match(std::string_view pattern, std::string_view path) noexcept;

}  // namespace leasefs::gate

// Which paths the journal keeps, and the path filters of diff and undo: paths
// relative to the root, as the filesystem names them.
#pragma once

#include <string_view>

namespace leasefs::journal {

// Whether `path` is one the journal keeps: relative, no "." or "..", not under
// .longrun, not empty.
bool journaled_path(std::string_view path) noexcept;

// Whether `path` is `prefix` or lies beneath it.
bool path_within(std::string_view path, std::string_view prefix) noexcept;

}  // namespace leasefs::journal

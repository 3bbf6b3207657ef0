#include "journal/kept_paths.hpp"

namespace leasefs::journal {

bool journaled_path(std::string_view path) noexcept {
  if (path.empty() || path.front() == '/' || path.size() >= 4096) return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (start == 0 && part == ".longrun") return false;
    start = end + 1;
  }
  return true;
}

bool path_within(std::string_view path, std::string_view prefix) noexcept {
  if (prefix.empty()) return true;
  return path == prefix ||
         (path.size() > prefix.size() && path.starts_with(prefix) && path[prefix.size()] == '/');
}

}  // namespace leasefs::journal

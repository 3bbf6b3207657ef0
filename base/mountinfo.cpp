#include "base/mountinfo.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace leasefs::base {

std::string unescape_mountinfo(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    auto octal = [&](size_t k) { return field[i + k] >= '0' && field[i + k] <= '7'; };
    if (field[i] == '\\' && i + 3 < field.size() && octal(1) && octal(2) && octal(3)) {
      out.push_back(static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                      (field[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

std::vector<MountEntry> read_mountinfo(const std::string& path) {
  std::vector<MountEntry> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    // id parent major:minor root mount-point options [optional...] - fstype source super
    std::istringstream fields(line);
    std::string id, parent, dev, root, mount_point, options, field;
    if (!(fields >> id >> parent >> dev >> root >> mount_point >> options)) continue;
    while (fields >> field && field != "-") {
    }
    MountEntry e;
    e.mount_id = std::atoi(id.c_str());
    e.device = dev;
    fields >> e.fstype >> e.source >> e.super_options;
    e.mount_point = unescape_mountinfo(mount_point);
    e.source = unescape_mountinfo(e.source);
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<uid_t> fuse_owner(const MountEntry& e) {
  std::istringstream in(e.super_options);
  std::string opt;
  while (std::getline(in, opt, ',')) {
    if (opt.rfind("user_id=", 0) != 0) continue;
    char* end = nullptr;
    errno = 0;
    unsigned long v = std::strtoul(opt.c_str() + 8, &end, 10);
    if (errno != 0 || *end != '\0' || end == opt.c_str() + 8) return std::nullopt;
    return static_cast<uid_t>(v);
  }
  return std::nullopt;
}

bool path_within(const std::string& path, const std::string& dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path.compare(0, dir.size(), dir) == 0 &&
         (path.size() == dir.size() || path[dir.size()] == '/');
}

std::optional<MountEntry> leasefs_mount_at(const std::string& path) {
  std::optional<MountEntry> found;
  for (auto& e : read_mountinfo()) {
    if (e.mount_point == path && e.fstype == "fuse.leasefs") found = std::move(e);
  }
  return found;
}

}  // namespace leasefs::base

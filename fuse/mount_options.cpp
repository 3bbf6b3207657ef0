#include "fuse/mount_options.hpp"

#include <sys/mount.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace leasefs::fuse {

namespace {

// The kernel flags libfuse 3.14's fuse_session_new() takes, but suid and dev.
struct KernelOption {
  std::string_view name;
  unsigned long flag;
  bool set;
};
constexpr std::array<KernelOption, 10> kKernelOptions = {{
    {"rw", MS_RDONLY, false},
    {"ro", MS_RDONLY, true},
    {"nosuid", MS_NOSUID, true},
    {"nodev", MS_NODEV, true},
    {"exec", MS_NOEXEC, false},
    {"noexec", MS_NOEXEC, true},
    {"async", MS_SYNCHRONOUS, false},
    {"sync", MS_SYNCHRONOUS, true},
    {"noatime", MS_NOATIME, true},
    {"dirsync", MS_DIRSYNC, true},
}};

const KernelOption* find_kernel_option(std::string_view name) {
  auto it = std::find_if(kKernelOptions.begin(), kKernelOptions.end(),
                         [&](const KernelOption& o) { return o.name == name; });
  return it == kKernelOptions.end() ? nullptr : &*it;
}

// Why an option is refused, or empty when it is not one leasefs knows to refuse.
std::string refusal(std::string_view name) {
  const std::string_view key = name.substr(0, name.find('='));
  for (std::string_view own : {"allow_other", "allow_root", "default_permissions", "fsname",
                               "subtype", "user_id", "group_id", "rootmode", "fd"}) {
    if (key == own) return "leasefs sets it itself";
  }
  if (key == "suid" || key == "dev") {
    return "a tree an agent writes is always mounted nosuid,nodev";
  }
  for (std::string_view cache : {"writeback_cache", "kernel_cache", "auto_cache", "max_read",
                                 "blkdev", "blksize", "auto_unmount", "direct_io"}) {
    if (key == cache) return "it changes how writes reach the gate, which leasefs decides";
  }
  return {};
}

}  // namespace

std::vector<std::string> check_mount_options(const std::vector<std::string>& values,
                                             std::string* error) {
  std::vector<std::string> out;
  for (const std::string& value : values) {
    size_t start = 0;
    while (start <= value.size()) {
      const size_t comma = std::min(value.find(',', start), value.size());
      const std::string name = value.substr(start, comma - start);
      start = comma + 1;
      if (name.empty()) continue;
      if (find_kernel_option(name)) {
        out.push_back(name);
        continue;
      }
      const std::string why = refusal(name);
      *error = "-o " + name + ": " +
               (why.empty() ? "not an option leasefs passes on (it takes ro, rw, noatime, "
                              "nodev, nosuid, noexec, exec, sync, async, dirsync)"
                            : "refused: " + why);
      return {};
    }
  }
  return out;
}

unsigned long mount_flags(const std::vector<std::string>& options) {
  unsigned long flags = MS_NOSUID | MS_NODEV;
  for (const std::string& name : options) {
    if (const KernelOption* o = find_kernel_option(name)) {
      flags = o->set ? (flags | o->flag) : (flags & ~o->flag);
    }
  }
  return flags;
}

}  // namespace leasefs::fuse

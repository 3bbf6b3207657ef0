// The standard mount options `leasefs mount -o` passes on to the kernel (ro,
// noatime, nodev, ...), checked before anything is mounted. Options leasefs sets
// itself (allow_other, default_permissions, fsname, ...) or that would weaken
// the gate (suid, dev, anything that turns on a kernel cache of writes) are
// refused, each with its reason.
#pragma once

#include <string>
#include <vector>

namespace leasefs::fuse {

// Splits each "-o a,b" value on commas and checks every option. Returns the
// options to pass on, in order, or sets *error and returns an empty vector.
std::vector<std::string> check_mount_options(const std::vector<std::string>& values,
                                             std::string* error);

// The mount(2) flags the checked options stand for, over leasefs's own
// MS_NOSUID | MS_NODEV (for a mount made without libfuse, fuse/takeover.hpp).
unsigned long mount_flags(const std::vector<std::string>& options);

}  // namespace leasefs::fuse

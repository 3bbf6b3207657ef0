// Who asked: a process's command line, for requests and refusals an approver
// reads. Read from /proc/<pid>/cmdline, bounded, arguments joined by spaces.
// It is the process's own text (agent text): shown only through inert rendering.
// Best effort: a pid from SO_PEERCRED or FUSE names the process that asked, but
// once it has exited the number may be reused; "?" when nothing can be read.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace leasefs::gate {

inline constexpr size_t kMaxCommandBytes = 1024;

std::string process_command(pid_t pid);

}  // namespace leasefs::gate

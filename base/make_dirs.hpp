// `mkdir -p` for the daemon's own directories under /run (the registry, the
// control socket's directory): each one it creates is 0755 whatever the umask,
// so every client may traverse it and nobody but its owner may write it.
#pragma once

#include <string>

namespace leasefs::base {

// Creates `dir` and its missing parents; throws an io_error naming `what` when
// one cannot be made.
void make_dirs_0755(const std::string& dir, const std::string& what);

}  // namespace leasefs::base

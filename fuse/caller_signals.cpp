#include "fuse/caller_signals.hpp"

#include <cstdint>
#include <fstream>
#include <string>

namespace leasefs::fuse {

bool signal_pending(pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(tid) + "/status");
  uint64_t pending = 0;
  uint64_t blocked = 0;
  std::string line;
  while (std::getline(in, line)) {
    const auto field = [&](const char* name) { return line.rfind(name, 0) == 0; };
    // SigPnd: the thread's own; ShdPnd: the process's, which any thread may take.
    if (field("SigPnd:") || field("ShdPnd:")) pending |= std::stoull(line.substr(7), nullptr, 16);
    if (field("SigBlk:")) blocked = std::stoull(line.substr(7), nullptr, 16);
  }
  return (pending & ~blocked) != 0;
}

}  // namespace leasefs::fuse

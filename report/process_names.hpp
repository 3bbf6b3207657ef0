// The process name a refusal carries (/proc/<pid>/comm). A storm of refusals
// must not read /proc for each: the name of a (pid, op, path) is read once per
// window and kept for the repeats.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "gate/decision.hpp"
#include "gate/op.hpp"

namespace leasefs::report {

// /proc/<pid>/comm, or "?" when it cannot be read.
std::string process_name(pid_t pid);

class ProcessNames {
 public:
  static constexpr int64_t kWindowMs = 2000;

  // The name of `caller`'s process, as read for (pid, op, path) within the window.
  std::string of(const gate::Caller& caller, gate::Op op, std::string_view path, int64_t now_ms);

 private:
  struct Recent {
    int64_t first_ms = 0;
    std::string process;
  };
  static constexpr size_t kMaxRecent = 4096;
  std::mutex mu_;
  // Keyed by paths the agent names: ordered (journal/journal.hpp says why).
  std::map<std::string, Recent, std::less<>> recent_;  // key: pid/op/path
  int64_t last_sweep_ms_ = 0;
};

}  // namespace leasefs::report

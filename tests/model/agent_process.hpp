// The agent for the model's driver: one process, forked and dropped to uid/gid
// 65534 before it does anything, that runs one operation at a time under a given
// root (the mount or the plain directory) and keeps descriptors between them, so
// a write through a descriptor opened under an earlier lease is a real one.
#pragma once

#include <sys/types.h>

#include <string>

#include "tests/model/gate_model.hpp"

namespace leasefs::test::model {

inline constexpr uid_t kAgentUid = 65534;
// The file copy_file_range reads from: in the tree, never a target.
inline constexpr const char* kCopySource = ".seed";

class AgentProcess {
 public:
  // Roots: 0 and 1 (the mount and the plain directory).
  AgentProcess(const std::string& root0, const std::string& root1);
  ~AgentProcess();
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  // 0 or the errno of the first step that failed; -1 when the agent is gone.
  int run(int root, const Op& op);

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
};

}  // namespace leasefs::test::model

#include "daemon/mount_table.hpp"

#include "base/spawn.hpp"

namespace leasefs::daemon {

bool fusermount(const std::vector<std::string>& args, const std::string& path) {
  std::vector<std::string> argv = {"fusermount3"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(path);
  return base::run_argv(argv, {.timeout_s = 30}).ok();
}

}  // namespace leasefs::daemon

#include "base/open_by_handle.hpp"

namespace leasefs::base {

UniqueFd open_by_handle(int mount_fd, struct file_handle* handle, int flags) {
  return ask_while_out_of_memory([&] { return ::open_by_handle_at(mount_fd, handle, flags); },
                                 std::chrono::seconds(1));
}

}  // namespace leasefs::base

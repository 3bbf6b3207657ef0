// Where a root's control socket lives (finding it from inside a mount:
// protocol/daemon_discovery.hpp).
#pragma once

#include <string>
#include <string_view>

namespace leasefs::protocol {

// $XDG_RUNTIME_DIR/leasefs/<instance>.sock, or /run/leasefs/<instance>.sock for
// root; <instance> is the root path escaped as systemd-escape --path does.
std::string default_socket_path(std::string_view root_path);
std::string escape_instance(std::string_view root_path);

}  // namespace leasefs::protocol

// Where a root's control socket lives, and how a client finds it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace leasefs::gate {

// $XDG_RUNTIME_DIR/leasefs/<instance>.sock, or /run/leasefs/<instance>.sock for
// root; <instance> is the root path escaped as systemd-escape --path does.
std::string default_socket_path(std::string_view root_path);
std::string escape_instance(std::string_view root_path);

// The daemon records its socket in .longrun/socket; a client inside a mount reads
// it through the mount. Returns the socket of the leasefs mount containing `dir`.
std::optional<std::string> discover_socket(std::string_view dir);

}  // namespace leasefs::gate

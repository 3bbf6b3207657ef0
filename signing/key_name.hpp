// The names under which a machine signs its audit heads.
//
// One key per machine signs the heads of every root it serves. Its key name is
// "leasefs/<machine id>" (systemd's /etc/machine-id, unique per installation and
// stable across renames of the host); each root's chain is its own log, whose
// origin is the key name followed by the root's absolute path, %-escaped where
// the spec does not allow a character (space, '+', '%', anything not printable
// ASCII): "leasefs/3d12…a4/home/me/project".
#pragma once

#include <string>
#include <string_view>

namespace leasefs::signing {

// From /etc/machine-id (or /var/lib/dbus/machine-id), else from the host name.
std::string machine_key_name();

std::string log_origin(std::string_view key_name, std::string_view root_path);

}  // namespace leasefs::signing

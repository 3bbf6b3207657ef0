// Extended attributes as the journal keeps them: name -> value in hex (a value
// is bytes; JSON keeps hex exactly). A name that is not UTF-8, which JSON cannot
// hold as it is, is kept as "hex:" and its bytes in hex (no real name starts
// so: each starts with its namespace, "user.", "trusted.", ...).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace leasefs::journal {

// Those of an open (not O_PATH) descriptor.
std::map<std::string, std::string> read_xattrs(int fd);
// The name an attribute kept by read_xattrs has on disk.
std::string xattr_name(const std::string& kept);

// Bytes in hex, and back.
std::string hex(std::string_view bytes);
std::string unhex(const std::string& hex);

}  // namespace leasefs::journal

// Extended attributes as the journal keeps them: name -> value in hex (a value
// is bytes; JSON keeps hex exactly).
#pragma once

#include <map>
#include <string>

namespace leasefs::journal {

// Those of an open (not O_PATH) descriptor.
std::map<std::string, std::string> read_xattrs(int fd);

// The bytes of a value kept in hex.
std::string unhex(const std::string& hex);

}  // namespace leasefs::journal

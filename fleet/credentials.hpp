// The bridge's credentials: a file holding one libpq connection string (with
// the machine role's password), which only the bridge's own uid may read. A
// file anyone else could read, or one the bridge does not own, is refused before
// anything connects: the agent's uid must never learn the machine's password.
#pragma once

#include <stdexcept>
#include <string>

namespace leasefs::fleet {

class CredentialsRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The connection string in `path`. Throws CredentialsRefused saying why.
std::string read_credentials(const std::string& path);

}  // namespace leasefs::fleet

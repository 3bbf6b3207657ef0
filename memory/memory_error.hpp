// The one exception type memory/ throws when storage fails: SQLite errors, I/O
// errors on the audit log, a schema the code does not understand. The message
// names the file involved so a person can find it.
#pragma once

#include <stdexcept>
#include <string>

namespace leasefs::memory {

class MemoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace leasefs::memory

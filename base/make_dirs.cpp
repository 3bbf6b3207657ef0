#include "base/make_dirs.hpp"

#include <sys/stat.h>

#include <cerrno>

#include "base/error.hpp"

namespace leasefs::base {

void make_dirs_0755(const std::string& dir, const std::string& what) {
  for (size_t pos = 0; pos != std::string::npos;) {
    const size_t slash = dir.find('/', pos + 1);
    const std::string partial = dir.substr(0, slash);
    pos = slash;
    if (partial.empty() || partial == "/") continue;
    if (::mkdir(partial.c_str(), 0755) == 0) {
      if (::chmod(partial.c_str(), 0755) != 0) throw_io_error("chmod " + partial, errno);
    } else if (errno != EEXIST) {
      throw_io_error("cannot create " + what + " " + partial, errno);
    }
  }
}

}  // namespace leasefs::base

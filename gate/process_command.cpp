#include "gate/process_command.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "base/unique_fd.hpp"

namespace leasefs::gate {

std::string process_command(pid_t pid) {
  if (pid <= 0) return "?";
  const std::string path = "/proc/" + std::to_string(pid) + "/cmdline";
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return "?";
  // One byte more than kept tells whether the line was cut.
  std::string buf(kMaxCommandBytes + 1, '\0');
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = ::read(fd.get(), buf.data() + got, buf.size() - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  const bool cut = got > kMaxCommandBytes;
  buf.resize(cut ? kMaxCommandBytes : got);
  while (!buf.empty() && buf.back() == '\0') buf.pop_back();
  if (buf.empty()) return "?";
  for (char& c : buf) {
    if (c == '\0') c = ' ';
  }
  if (cut) buf += "...";
  return buf;
}

}  // namespace leasefs::gate

#include "fleet/credentials.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/unique_fd.hpp"

namespace leasefs::fleet {

namespace {

constexpr size_t kMaxBytes = 4096;

std::string octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

std::string read_credentials(const std::string& path) {
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
  if (!fd) throw CredentialsRefused("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw CredentialsRefused(path + " is not a regular file");
  }
  if (st.st_uid != ::geteuid()) {
    throw CredentialsRefused(path + " belongs to uid " + std::to_string(st.st_uid) +
                             ", not to the bridge's uid " + std::to_string(::geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    throw CredentialsRefused(path + " has mode " + octal(st.st_mode) +
                             ": others may read it; only its owner may (chmod 600 " + path + ")");
  }
  std::string text(kMaxBytes + 1, '\0');
  ssize_t n = ::read(fd.get(), text.data(), text.size());
  if (n < 0) throw CredentialsRefused("cannot read " + path + ": " + std::strerror(errno));
  if (static_cast<size_t>(n) > kMaxBytes) throw CredentialsRefused(path + " is too long");
  text.resize(static_cast<size_t>(n));
  // The first line is the connection string.
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
  if (text.empty()) throw CredentialsRefused(path + " holds no connection string");
  return text;
}

}  // namespace leasefs::fleet

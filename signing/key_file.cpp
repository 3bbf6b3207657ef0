#include "signing/key_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "base/unique_fd.hpp"
#include "signing/verifier_key.hpp"

namespace leasefs::signing {
namespace {

constexpr size_t kMaxKeyFileBytes = 64 * 1024;

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string owner_text(uid_t uid) {
  return uid == 0 ? "root" : "uid " + std::to_string(uid);
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Why a directory on the way to the key lets someone else replace what is in
// it, or nullopt.
std::optional<std::string> untrusted_dirs(const std::string& dir) {
  char real[PATH_MAX];
  if (!::realpath(dir.c_str(), real)) return dir + ": " + std::strerror(errno);
  std::string at = real;
  for (;;) {
    struct stat st {};
    if (::stat(at.c_str(), &st) != 0) return at + ": " + std::strerror(errno);
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
      return "the directory " + at + " belongs to " + owner_text(st.st_uid) +
             ", who could replace the key";
    }
    if ((st.st_mode & 022) != 0 && (st.st_mode & S_ISVTX) == 0) {
      return "the directory " + at + " is writable by others (mode " + mode_text(st.st_mode) +
             "), who could replace the key";
    }
    if (at == "/") return std::nullopt;
    at = parent_of(at);
  }
}

std::optional<std::string> write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::string(std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return std::string(std::strerror(errno));
  return std::nullopt;
}

}  // namespace

LoadedKey load_key_file(const std::string& path) {
  LoadedKey out;
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
  if (!fd) {
    out.missing = errno == ENOENT;
    out.why = out.missing ? "no key at " + path
                          : "cannot open the key " + path + ": " + std::strerror(errno) +
                                (errno == ELOOP ? " (it is a symlink)" : "");
    return out;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    out.why = "cannot stat the key " + path + ": " + std::strerror(errno);
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.why = "the key " + path + " is not a regular file";
    return out;
  }
  if (st.st_uid != ::geteuid()) {
    out.why = "refusing the key " + path + ": it belongs to " + owner_text(st.st_uid) + ", not " +
              owner_text(::geteuid());
    return out;
  }
  if ((st.st_mode & 077) != 0) {
    out.why = "refusing the key " + path + ": its mode " + mode_text(st.st_mode) +
              " lets group or others read or write it (chmod 600 " + path + ")";
    return out;
  }
  if (auto why = untrusted_dirs(parent_of(path))) {
    out.why = "refusing the key " + path + ": " + *why;
    return out;
  }
  if (st.st_size <= 0 || static_cast<size_t>(st.st_size) > kMaxKeyFileBytes) {
    out.why = "the key " + path + " is empty or too big to be a key";
    return out;
  }
  std::string pem(static_cast<size_t>(st.st_size), '\0');
  const ssize_t n = ::pread(fd.get(), pem.data(), pem.size(), 0);
  if (n != static_cast<ssize_t>(pem.size())) {
    out.why = "cannot read the key " + path;
    return out;
  }
  try {
    out.key = Ed25519Key::from_pem(pem);
  } catch (const std::exception& e) {
    out.why = "the key " + path + " is not an Ed25519 private key in PEM (" + e.what() + ")";
  }
  return out;
}

std::optional<std::string> create_key_file(const std::string& path, const Ed25519Key& key,
                                           const std::string& name) {
  const std::string dir = parent_of(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT || ::mkdir(dir.c_str(), 0755) != 0) {
      return "cannot make the directory " + dir + ": " + std::strerror(errno);
    }
    (void)::chmod(dir.c_str(), 0755);  // whatever the umask
  }
  if (auto why = untrusted_dirs(dir)) return "not making a key there: " + *why;
  base::UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) {
    return errno == EEXIST ? "a key is already at " + path + "; it is never replaced"
                           : "cannot create " + path + ": " + std::strerror(errno);
  }
  if (::fchmod(fd.get(), 0600) != 0) return "cannot chmod " + path + ": " + std::strerror(errno);
  if (auto why = write_all(fd.get(), key.pem())) {
    (void)::unlink(path.c_str());
    return "cannot write " + path + ": " + *why;
  }
  // The verifier key is public: replaced whole, never half written.
  const std::string pub = path + ".pub";
  const std::string tmp = pub + ".tmp";
  base::UniqueFd pub_fd(
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!pub_fd) return "cannot create " + tmp + ": " + std::strerror(errno);
  (void)::fchmod(pub_fd.get(), 0644);
  if (auto why = write_all(pub_fd.get(), VerifierKey::of(name, key.public_key()).text() + "\n")) {
    return "cannot write " + tmp + ": " + *why;
  }
  if (::rename(tmp.c_str(), pub.c_str()) != 0) {
    return "cannot rename " + tmp + ": " + std::strerror(errno);
  }
  base::UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd) (void)::fsync(dir_fd.get());
  return std::nullopt;
}

}  // namespace leasefs::signing

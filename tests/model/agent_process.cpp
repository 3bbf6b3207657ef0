#include "tests/model/agent_process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace leasefs::test::model {

namespace {

// What crosses the pipe: fixed size, so one read is one command.
struct Wire {
  int root;
  uint8_t kind;
  unsigned flags, mode;
  int slot;
  long len;
  char a[256], b[256];
};

constexpr int kSlots = 8;
constexpr const char* kDanglingTarget = "/nonexistent-leasefs-model-target";

int err(long rc) {
  return rc < 0 ? errno : 0;
}

// `name` under the root's descriptor, as a path for the calls that take one.
// (The agent is forked from a threaded process: no allocation after the fork.)
const char* by_fd(int root, const char* name, char* buf) {
  std::snprintf(buf, sizeof(Wire::a) + 32, "/proc/self/fd/%d/%s", root, name);
  return buf;
}

int with_fd(int fd, int (*body)(int fd, const Wire& w), const Wire& w) {
  if (fd < 0) return errno;
  int r = body(fd, w);
  ::close(fd);
  return r;
}

int serve_one(const int roots[2], int kept[2][kSlots], const Wire& w) {
  const int r = roots[w.root];
  char path[sizeof w.a + 32];
  char data[512];
  std::memset(data, 'a' + static_cast<char>(w.len % 26), sizeof data);
  const auto len = static_cast<size_t>(w.len) % sizeof data;
  int* slot = &kept[w.root][w.slot % kSlots];
  switch (static_cast<OpKind>(w.kind)) {
    case OpKind::kCreate: {
      int fd = ::openat(r, w.a, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, w.mode);
      if (fd < 0) return errno;
      ::close(fd);
      return 0;
    }
    case OpKind::kTrunc:
      return with_fd(
          ::openat(r, w.a, O_WRONLY | O_TRUNC | O_CLOEXEC), [](int, const Wire&) { return 0; }, w);
    case OpKind::kAppend:
      return with_fd(
          ::openat(r, w.a, O_WRONLY | O_APPEND | O_CLOEXEC),
          [](int fd, const Wire& w) {
            char d[512];
            std::memset(d, 'A' + static_cast<char>(w.len % 26), sizeof d);
            return err(::write(fd, d, static_cast<size_t>(w.len) % sizeof d + 1));
          },
          w);
    case OpKind::kKeep: {
      int fd = ::openat(r, w.a, O_RDWR | O_CLOEXEC);
      if (fd < 0) return errno;
      if (*slot >= 0) ::close(*slot);
      *slot = fd;
      return 0;
    }
    case OpKind::kWriteKept:
      return err(::pwrite(*slot, data, len + 1, w.len % 64));
    case OpKind::kTruncKept:
      return err(::ftruncate(*slot, w.len % 300));
    case OpKind::kChmodKept:
      return err(::fchmod(*slot, w.mode));
    case OpKind::kCloseKept:
      if (*slot >= 0) ::close(*slot);
      *slot = -1;
      return 0;
    case OpKind::kTruncate: {
      // truncate(2) by name, through the root's descriptor.
      return err(::truncate(by_fd(r, w.a, path), w.len % 300));
    }
    case OpKind::kUnlink:
      return err(::unlinkat(r, w.a, 0));
    case OpKind::kRmdir:
      return err(::unlinkat(r, w.a, AT_REMOVEDIR));
    case OpKind::kRename:
      return err(::syscall(SYS_renameat2, r, w.a, r, w.b, w.flags));
    case OpKind::kLink:
      return err(::linkat(r, w.a, r, w.b, 0));
    case OpKind::kSymlink:
      return err(::symlinkat(kDanglingTarget, r, w.a));
    case OpKind::kChmod:
      return err(::fchmodat(r, w.a, w.mode, 0));
    case OpKind::kUtimes: {
      timespec ts[2] = {{1000000 + w.len, 0}, {2000000 + w.len, 0}};
      return err(::utimensat(r, w.a, ts, AT_SYMLINK_NOFOLLOW));
    }
    case OpKind::kMkdir:
      return err(::mkdirat(r, w.a, w.mode));
    case OpKind::kSetxattr: {
      return err(::setxattr(by_fd(r, w.a, path), "user.model", data, len % 16 + 1, 0));
    }
    case OpKind::kRemovexattr: {
      return err(::removexattr(by_fd(r, w.a, path), "user.model"));
    }
    case OpKind::kFallocate:
      return with_fd(
          ::openat(r, w.a, O_WRONLY | O_CLOEXEC),
          [](int fd, const Wire& w) { return err(::fallocate(fd, 0, 0, w.len % 8192 + 1)); }, w);
    case OpKind::kCopyRange: {
      int src = ::openat(r, kCopySource, O_RDONLY | O_CLOEXEC);
      if (src < 0) return errno;
      int dst = ::openat(r, w.a, O_WRONLY | O_CLOEXEC);
      loff_t in = 0, out = w.len % 100;
      int rc = dst < 0 ? errno : err(::copy_file_range(src, &in, dst, &out, 64, 0));
      ::close(src);
      if (dst >= 0) ::close(dst);
      return rc;
    }
  }
  return EINVAL;
}

[[noreturn]] void serve(int in, int out, const std::string roots_text[2]) {
  // Nothing of the driver's: above all not its /dev/fuse descriptor, which would
  // keep a mount whose server was killed alive with this process waiting on it.
  // And it ends with the driver.
  for (int fd = 3; fd < 4096; ++fd) {
    if (fd != in && fd != out) ::close(fd);
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::setgroups(0, nullptr) != 0 || ::setresgid(kAgentUid, kAgentUid, kAgentUid) != 0 ||
      ::setresuid(kAgentUid, kAgentUid, kAgentUid) != 0) {
    ::_exit(99);
  }
  ::umask(022);
  int roots[2];
  for (int i = 0; i < 2; ++i) {
    roots[i] = ::open(roots_text[i].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (roots[i] < 0) ::_exit(98);
  }
  int kept[2][kSlots];
  for (auto& row : kept) {
    for (int& fd : row) fd = -1;
  }
  Wire w{};
  while (::read(in, &w, sizeof w) == static_cast<ssize_t>(sizeof w)) {
    int rc = serve_one(roots, kept, w);
    if (::write(out, &rc, sizeof rc) != sizeof rc) break;
  }
  ::_exit(0);
}

}  // namespace

AgentProcess::AgentProcess(const std::string& root0, const std::string& root1) {
  int down[2], up[2];
  if (::pipe2(down, O_CLOEXEC) != 0 || ::pipe2(up, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe");
  }
  const std::string roots[2] = {root0, root1};
  pid_ = ::fork();
  if (pid_ == 0) serve(down[0], up[1], roots);
  ::close(down[0]);
  ::close(up[1]);
  to_ = down[1];
  from_ = up[0];
}

AgentProcess::~AgentProcess() {
  ::close(to_);
  ::close(from_);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

int AgentProcess::run(int root, const Op& op) {
  Wire w{};
  w.root = root;
  w.kind = static_cast<uint8_t>(op.kind);
  w.flags = op.flags;
  w.mode = op.mode;
  w.slot = op.slot;
  w.len = op.len;
  std::strncpy(w.a, op.a.c_str(), sizeof w.a - 1);
  std::strncpy(w.b, op.b.c_str(), sizeof w.b - 1);
  if (::write(to_, &w, sizeof w) != static_cast<ssize_t>(sizeof w)) return -1;
  int rc = 0;
  if (::read(from_, &rc, sizeof rc) != sizeof rc) return -1;
  return rc;
}

}  // namespace leasefs::test::model

// Extended attributes, through /proc/self/fd paths (the *xattr calls refuse O_PATH
// descriptors).
//
// security.capability. Without FUSE_HANDLE_KILLPRIV_V2 (libfuse < 3.17) the
// kernel asks GETXATTR security.capability before every write(2), to know whether
// the write must drop file capabilities. Answering ENOSYS would stop those round
// trips but switches every xattr off for the whole mount, so xattrs would not
// work even under a lease. Instead each inode caches whether the file has the
// attribute (only this mount changes the tree, and setxattr/removexattr through
// it reset the cache): after the first write the answer is an ENODATA with no
// syscall. The round trip remains; bench/fs_bench.sh measures it against an
// ENOSYS mount (leasefs_bench_mount --xattr-enosys).
#include <sys/xattr.h>

#include <cstring>
#include <functional>
#include <vector>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

constexpr const char* kCapability = "security.capability";

void reply_xattr(fuse_req_t req, size_t size, const std::function<ssize_t(char*, size_t)>& call) {
  if (size == 0) {
    ssize_t n = call(nullptr, 0);
    if (n < 0) return static_cast<void>(fuse_reply_err(req, errno));
    fuse_reply_xattr(req, static_cast<size_t>(n));
    return;
  }
  std::vector<char> buf(size);
  ssize_t n = call(buf.data(), size);
  if (n < 0) return static_cast<void>(fuse_reply_err(req, errno));
  fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
}

}  // namespace

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  guarded(req, "getxattr", [&] {
    Filesystem& fs = Filesystem::of(req);
    if (fs.options().xattr_enosys) return static_cast<void>(fuse_reply_err(req, ENOSYS));
    Inode& inode = fs.inode(ino);
    const bool is_capability = std::strcmp(name, kCapability) == 0;
    if (is_capability && inode.capability.load(std::memory_order_relaxed) == 0) {
      return static_cast<void>(fuse_reply_err(req, ENODATA));
    }
    const PinnedFd pinned = inode.fd.get();  // `proc` names it
    const std::string proc = Filesystem::fd_path(pinned);
    if (size == 0) {
      ssize_t n = ::getxattr(proc.c_str(), name, nullptr, 0);
      if (is_capability) inode.capability.store(n >= 0 ? 1 : (errno == ENODATA ? 0 : -1));
      if (n < 0) return static_cast<void>(fuse_reply_err(req, errno));
      return static_cast<void>(fuse_reply_xattr(req, static_cast<size_t>(n)));
    }
    std::vector<char> buf(size);
    ssize_t n = ::getxattr(proc.c_str(), name, buf.data(), size);
    if (is_capability)
      inode.capability.store(n >= 0 || errno == ERANGE ? 1 : (errno == ENODATA ? 0 : -1));
    if (n < 0) return static_cast<void>(fuse_reply_err(req, errno));
    fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
  });
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  guarded(req, "listxattr", [&] {
    const PinnedFd pinned = Filesystem::of(req).inode(ino).fd.get();  // `proc` names it
    const std::string proc = Filesystem::fd_path(pinned);
    reply_xattr(req, size,
                [&](char* buf, size_t len) { return ::listxattr(proc.c_str(), buf, len); });
  });
}

void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                 int flags) {
  guarded(req, "setxattr", [&] {
    Filesystem& fs = Filesystem::of(req);
    Inode& inode = fs.inode(ino);
    int res = fs.gate_inode(gate::Op::kSetxattr, inode, Filesystem::caller(req));
    if (res == 0) {
      const PinnedFd pinned = inode.fd.get();  // `proc` names it
      const std::string proc = Filesystem::fd_path(pinned);
      if (::setxattr(proc.c_str(), name, value, size, flags) != 0) res = -errno;
      if (std::strcmp(name, kCapability) == 0) inode.capability.store(-1);
    }
    fuse_reply_err(req, -res);
  });
}

void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  guarded(req, "removexattr", [&] {
    Filesystem& fs = Filesystem::of(req);
    Inode& inode = fs.inode(ino);
    int res = fs.gate_inode(gate::Op::kRemovexattr, inode, Filesystem::caller(req));
    if (res == 0) {
      const PinnedFd pinned = inode.fd.get();  // `proc` names it
      const std::string proc = Filesystem::fd_path(pinned);
      if (::removexattr(proc.c_str(), name) != 0) res = -errno;
      if (std::strcmp(name, kCapability) == 0) inode.capability.store(-1);
    }
    fuse_reply_err(req, -res);
  });
}

}  // namespace leasefs::fuse

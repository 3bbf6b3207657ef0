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
#include <vector>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

constexpr const char* kCapability = "security.capability";

// Replies with the size of an xattr value or list (`size` 0: the caller asks
// how big) or with its bytes.
void reply_sized(fuse_req_t req, size_t size, const std::vector<char>& buf, ssize_t n) {
  if (size == 0) return static_cast<void>(fuse_reply_xattr(req, static_cast<size_t>(n)));
  fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
}

}  // namespace

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  guarded(req, "getxattr", [&] {
    Filesystem& fs = Filesystem::of(req);
    if (fs.options().xattr_enosys) return static_cast<void>(reply_status(req, -ENOSYS));
    Inode& inode = fs.inode(ino);
    const bool is_capability = std::strcmp(name, kCapability) == 0;
    if (is_capability && inode.capability.load(std::memory_order_relaxed) == 0) {
      return static_cast<void>(reply_status(req, -ENODATA));
    }
    // The pin ends before the reply: once replied, the kernel may forget the
    // inode at once, from another thread.
    std::vector<char> buf(size);
    ssize_t n = 0;
    int err = 0;
    {
      const PinnedFd pinned = inode.fd.get();  // `proc` names it
      const std::string proc = Filesystem::fd_path(pinned);
      n = ::getxattr(proc.c_str(), name, size == 0 ? nullptr : buf.data(), size);
      err = n < 0 ? -errno : 0;
      if (is_capability) {
        inode.capability.store(n >= 0 || err == -ERANGE ? 1 : (err == -ENODATA ? 0 : -1));
      }
    }
    if (n < 0) return static_cast<void>(reply_status(req, err));
    reply_sized(req, size, buf, n);
  });
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  guarded(req, "listxattr", [&] {
    std::vector<char> buf(size);
    ssize_t n = 0;
    int err = 0;
    {  // the pin ends before the reply (see op_getxattr)
      const PinnedFd pinned = Filesystem::of(req).inode(ino).fd.get();  // `proc` names it
      const std::string proc = Filesystem::fd_path(pinned);
      n = ::listxattr(proc.c_str(), size == 0 ? nullptr : buf.data(), size);
      err = n < 0 ? -errno : 0;
    }
    if (n < 0) return static_cast<void>(reply_status(req, err));
    reply_sized(req, size, buf, n);
  });
}

namespace {

// setxattr and removexattr: gate the inode, apply `change` to its /proc path,
// and forget the cached security.capability answer when that is the name.
template <typename Change>
int change_xattr(fuse_req_t req, gate::Op op, fuse_ino_t ino, const std::string& name,
                 const Change& change) {
  Filesystem& fs = Filesystem::of(req);
  Inode& inode = fs.inode(ino);
  int res = fs.gate_inode(op, inode, Filesystem::caller(req));
  if (res < 0) return res;
  {                                          // the pin ends before the reply (see op_getxattr)
    const PinnedFd pinned = inode.fd.get();  // `proc` names it
    const std::string proc = Filesystem::fd_path(pinned);
    if (change(proc.c_str()) != 0) res = -errno;
    if (name == kCapability) inode.capability.store(-1);
  }
  if (res < 0) return res;
  reply_status(req, 0);
  return 0;
}

}  // namespace

void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                 int flags) {
  attempt_or_park(
      req, "setxattr",
      [ino, name = std::string(name), value = value ? std::string(value, size) : std::string(),
       flags](fuse_req_t req) {
        return change_xattr(req, gate::Op::kSetxattr, ino, name, [&](const char* path) {
          return ::setxattr(path, name.c_str(), value.data(), value.size(), flags);
        });
      });
}

void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  attempt_or_park(req, "removexattr", [ino, name = std::string(name)](fuse_req_t req) {
    return change_xattr(req, gate::Op::kRemovexattr, ino, name,
                        [&](const char* path) { return ::removexattr(path, name.c_str()); });
  });
}

}  // namespace leasefs::fuse

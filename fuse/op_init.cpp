#include <unistd.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

void want(fuse_conn_info* conn, unsigned flag) {
  if (conn->capable & flag) conn->want |= flag;
}

}  // namespace

void op_init(void* userdata, fuse_conn_info* conn) {
  // Every write must reach the gate synchronously (I6): no writeback cache, ever.
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  // Before a write the kernel still clears suid/sgid by its own rule, as a
  // SETATTR of the mode, which the gate sees; the daemon applies the local file
  // system's rule after every content change it serves (privilege_bits.hpp).
  conn->want &= ~FUSE_CAP_HANDLE_KILLPRIV;
  want(conn, FUSE_CAP_SPLICE_READ);
  want(conn, FUSE_CAP_SPLICE_WRITE);
  // Not FUSE_CAP_SPLICE_MOVE: moving a page steals it from the backing file's
  // page cache, so once the kernel drops our copy the next read goes to disk
  // (bench/README.md has the measurement). passthrough_hp does not ask for it either.
  conn->want &= ~FUSE_CAP_SPLICE_MOVE;
  want(conn, FUSE_CAP_FLOCK_LOCKS);
  want(conn, FUSE_CAP_READDIRPLUS);
  want(conn, FUSE_CAP_READDIRPLUS_AUTO);
  want(conn, FUSE_CAP_ATOMIC_O_TRUNC);  // O_TRUNC arrives with the open: one gate check
  // Symlink targets only change through us (unlink + symlink), which invalidates.
  want(conn, FUSE_CAP_CACHE_SYMLINKS);
  // POSIX ACLs as natively: the kernel enforces them (with default_permissions)
  // from system.posix_acl_* xattrs, which pass through to the backing file. It
  // then leaves the umask to us: creating ops run with the caller's umask
  // (ActAsCaller), which the backing file system ignores under a default ACL.
  want(conn, FUSE_CAP_POSIX_ACL);
  want(conn, FUSE_CAP_DONT_MASK);
  // Directories need no open: listings are read without a handle and cached by
  // the kernel (op_readdir.cpp).
  static_cast<Filesystem*>(userdata)->set_no_opendir(conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT);
  conn->max_write = 1u << 20;
  [[maybe_unused]] Filesystem& fs = *static_cast<Filesystem*>(userdata);  // unused on libfuse 3.14
#if LEASEFS_FUSE_IO_URING
  // Over a ring no interrupt is matched to its request (transport.hpp): the
  // kernel is told to send none, and waits look at their callers' signals.
  if (conn->capable_ext & FUSE_CAP_OVER_IO_URING) {
    conn->no_interrupt = 1;
    fs.transport().set_interrupts_off();
  }
#endif
#if LEASEFS_FUSE_PASSTHROUGH
  // Read-only opens are read by the kernel from the backing file (io_modes.hpp).
  // Registering a backing file takes CAP_SYS_ADMIN: only a daemon run as root.
  if (fs.options().passthrough_reads && (conn->capable & FUSE_CAP_PASSTHROUGH) &&
      ::geteuid() == 0) {
    conn->want |= FUSE_CAP_PASSTHROUGH;
    // A root on overlayfs (stacked once) may still be passed through.
    conn->max_backing_stack_depth = 1;
    fs.io_modes().enable(true);
  }
#endif
}

}  // namespace leasefs::fuse

#include "fuse/operations.hpp"

namespace leasefs::fuse {

// No flush handler: nothing is buffered here, and without one the kernel stops
// sending FLUSH on every close after the first ENOSYS.
fuse_lowlevel_ops make_operations() noexcept {
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.forget = op_forget;
  ops.forget_multi = op_forget_multi;
  ops.getattr = op_getattr;
  ops.setattr = op_setattr;
  ops.readlink = op_readlink;
  ops.mknod = op_mknod;
  ops.mkdir = op_mkdir;
  ops.symlink = op_symlink;
  ops.unlink = op_unlink;
  ops.rmdir = op_rmdir;
  ops.rename = op_rename;
  ops.link = op_link;
  ops.open = op_open;
  ops.create = op_create;
  ops.read = op_read;
  ops.write_buf = op_write_buf;
  ops.release = op_release;
  ops.fsync = op_fsync;
  ops.opendir = op_opendir;
  ops.readdir = op_readdir;
  ops.readdirplus = op_readdirplus;
  ops.fsyncdir = op_fsyncdir;
  ops.statfs = op_statfs;
  ops.setxattr = op_setxattr;
  ops.getxattr = op_getxattr;
  ops.listxattr = op_listxattr;
  ops.removexattr = op_removexattr;
  ops.fallocate = op_fallocate;
  ops.copy_file_range = op_copy_file_range;
  ops.lseek = op_lseek;
  ops.flock = op_flock;
  return ops;
}

}  // namespace leasefs::fuse

// The operations table and one function per FUSE operation, each in its own
// op_<name>.cpp. An op_x() sends exactly one reply; errors travel as -errno.
#pragma once

#include <fuse_lowlevel.h>

#include "fuse/filesystem.hpp"

namespace leasefs::fuse {

fuse_lowlevel_ops make_operations() noexcept;

void op_init(void* userdata, fuse_conn_info* conn);
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name);
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets);
void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int valid, fuse_file_info* fi);
void op_readlink(fuse_req_t req, fuse_ino_t ino);
void op_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev);
void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode);
void op_symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name);
void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name);
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name);
void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
               const char* newname, unsigned int flags);
void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname);
void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
               fuse_file_info* fi);
void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void op_write_buf(fuse_req_t req, fuse_ino_t ino, fuse_bufvec* in_buf, off_t off,
                  fuse_file_info* fi);
void op_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);
void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);
void op_statfs(fuse_req_t req, fuse_ino_t ino);
void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                 int flags);
void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size);
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name);
void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
                  fuse_file_info* fi);
void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, fuse_file_info* fi_in,
                        fuse_ino_t ino_out, off_t off_out, fuse_file_info* fi_out, size_t len,
                        int flags);
void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info* fi);
void op_flock(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, int op);

// The open of an existing file as op_open does it (an open for writing is asked
// about as one), also used by a create that finds its name taken. `as_caller`:
// the caller's permission is checked underneath (the kernel skipped it).
int open_inode(fuse_req_t req, Filesystem& fs, Inode& inode, fuse_file_info* fi, bool as_caller);

inline FileHandle& handle_of(const fuse_file_info* fi) {
  return *reinterpret_cast<FileHandle*>(fi->fh);
}

}  // namespace leasefs::fuse

// Directory listing. A DirHandle keeps a DIR stream; offsets are telldir()
// cookies. readdirplus looks every entry up (one lookup reference each) so the
// kernel learns names and attributes in one round trip; an entry that does not
// fit in the reply buffer gives its reference back.
//
// Cache policy: cache_readdir + keep_cache outside .longrun (the kernel drops the
// cached listing itself when an entry changes through the mount); none inside,
// where the daemon adds files underneath.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

struct DirHandle {
  BudgetSlot slot;  // counts the DIR stream's descriptor
  DIR* dp = nullptr;
  off_t offset = 0;
  struct dirent* entry = nullptr;
  ~DirHandle() {
    if (dp) ::closedir(dp);
  }
};

DirHandle& dir_of(const fuse_file_info* fi) {
  return *reinterpret_cast<DirHandle*>(fi->fh);
}

bool is_dot_or_dotdot(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi,
                bool plus) {
  Filesystem& fs = Filesystem::of(req);
  Inode& dir = fs.inode(ino);
  DirHandle& d = dir_of(fi);
  std::vector<char> buf(size);
  size_t used = 0;
  if (off != d.offset) {
    ::seekdir(d.dp, off);
    d.entry = nullptr;
    d.offset = off;
  }
  int err = 0;
  while (true) {
    if (!d.entry) {
      errno = 0;
      d.entry = ::readdir(d.dp);
      if (!d.entry) {
        err = -errno;  // 0 at the end of the directory
        break;
      }
    }
    const off_t next = d.entry->d_off;
    const char* name = d.entry->d_name;
    size_t need;
    if (plus) {
      fuse_entry_param e{};
      bool looked_up = false;
      if (is_dot_or_dotdot(name)) {
        e.attr.st_ino = d.entry->d_ino;
        e.attr.st_mode = static_cast<mode_t>(d.entry->d_type) << 12;
      } else {
        int res = fs.lookup(dir, name, &e);
        if (res < 0) {
          if (res == -ENOENT) {  // vanished since readdir; skip it
            d.entry = nullptr;
            d.offset = next;
            continue;
          }
          err = -res;
          break;
        }
        looked_up = true;
      }
      need = fuse_add_direntry_plus(req, buf.data() + used, size - used, name, &e, next);
      if (need > size - used) {
        if (looked_up) fs.table().forget(reinterpret_cast<Inode*>(e.ino), 1);
        break;
      }
    } else {
      struct stat st {};
      st.st_ino = d.entry->d_ino;
      st.st_mode = static_cast<mode_t>(d.entry->d_type) << 12;
      need = fuse_add_direntry(req, buf.data() + used, size - used, name, &st, next);
      if (need > size - used) break;
    }
    used += need;
    d.entry = nullptr;
    d.offset = next;
  }
  // An error after some entries is reported on the next call, not now.
  if (err && used == 0) {
    reply_status(req, err);
  } else {
    fuse_reply_buf(req, buf.data(), used);
  }
}

}  // namespace

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  guarded(req, "opendir", [&] {
    Filesystem& fs = Filesystem::of(req);
    Inode& inode = fs.inode(ino);
    auto d = std::make_unique<DirHandle>();
    if (!d->slot.take()) return static_cast<void>(reply_status(req, -EMFILE));
    int fd = ::openat(inode.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return static_cast<void>(reply_status(req, -errno));
    d->dp = ::fdopendir(fd);
    if (!d->dp) {
      const int err = -errno;
      ::close(fd);
      return static_cast<void>(reply_status(req, err));
    }
    const bool cacheable = !inode.protected_path.load();
    fi->cache_readdir = cacheable ? 1 : 0;
    fi->keep_cache = cacheable ? 1 : 0;
    fi->fh = fs.adopt_dir(
        Filesystem::OwnedDir(d.release(), [](void* p) { delete static_cast<DirHandle*>(p); }));
    if (fuse_reply_open(req, fi) != 0) fs.disown_dir(fi->fh);
  });
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  guarded(req, "readdir", [&] { do_readdir(req, ino, size, off, fi, false); });
}

void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  guarded(req, "readdirplus", [&] { do_readdir(req, ino, size, off, fi, true); });
}

void op_releasedir(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi) {
  Filesystem::of(req).disown_dir(fi->fh);  // the stream closes as it goes
  reply_status(req, 0);
}

void op_fsyncdir(fuse_req_t req, fuse_ino_t /*ino*/, int datasync, fuse_file_info* fi) {
  guarded(req, "fsyncdir", [&] {
    const int fd = ::dirfd(dir_of(fi).dp);
    const int res = (datasync ? ::fdatasync(fd) : ::fsync(fd)) == 0 ? 0 : -errno;
    reply_status(req, res);
  });
}

}  // namespace leasefs::fuse

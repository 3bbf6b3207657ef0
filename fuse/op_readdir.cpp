// Directory listing, without a handle. The kernel is told that directories
// need no open (FUSE_CAP_NO_OPENDIR_SUPPORT: OPENDIR is answered ENOSYS once,
// then neither OPENDIR nor RELEASEDIR is ever sent) and then caches every
// listing (FOPEN_CACHE_DIR, its default without an open): a warm `ls`, `find`
// or `git status` sends nothing for a directory. The kernel drops a cached
// listing when an entry changes through the mount; in .longrun, where the
// daemon adds files underneath, attributes live 0 s, so each listing from its
// start asks for the directory's mtime first and a changed one drops the cache
// (auto_inval_data). Reading a directory is not gated, so no open is missed.
//
// Each READDIR opens the directory, seeks to the kernel's cookie (the d_off of
// the last entry returned) and reads. readdirplus looks every entry up (one
// lookup reference each) so the kernel learns names and attributes in one
// round trip; an entry that does not fit in the reply gives its reference back
// and is read again by the next call.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

struct DirStream {
  BudgetSlot slot;  // counts the stream's descriptor for the length of one call
  DIR* dp = nullptr;
  ~DirStream() {
    if (dp) ::closedir(dp);
  }
};

// 0, or -errno.
int open_dir(const Inode& dir, DirStream* out) {
  if (!out->slot.take()) return -EMFILE;
  int fd = ::openat(dir.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  out->dp = ::fdopendir(fd);
  if (!out->dp) {
    const int err = -errno;
    ::close(fd);
    return err;
  }
  return 0;
}

bool is_dot_or_dotdot(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus) {
  Filesystem& fs = Filesystem::of(req);
  Inode& dir = fs.inode(ino);
  DirStream d;
  if (int r = open_dir(dir, &d); r < 0) return static_cast<void>(reply_status(req, r));
  if (off != 0) ::seekdir(d.dp, off);
  std::vector<char> buf(size);
  size_t used = 0;
  int err = 0;
  while (true) {
    errno = 0;
    const struct dirent* entry = ::readdir(d.dp);
    if (!entry) {
      err = -errno;  // 0 at the end of the directory
      break;
    }
    const off_t next = entry->d_off;
    const char* name = entry->d_name;
    size_t need;
    if (plus) {
      fuse_entry_param e{};
      bool looked_up = false;
      if (is_dot_or_dotdot(name)) {
        e.attr.st_ino = entry->d_ino;
        e.attr.st_mode = static_cast<mode_t>(entry->d_type) << 12;
      } else {
        int res = fs.lookup(dir, name, &e);
        if (res < 0) {
          if (res == -ENOENT) continue;  // vanished since readdir; skip it
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
      st.st_ino = entry->d_ino;
      st.st_mode = static_cast<mode_t>(entry->d_type) << 12;
      need = fuse_add_direntry(req, buf.data() + used, size - used, name, &st, next);
      if (need > size - used) break;
    }
    used += need;
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
  Filesystem& fs = Filesystem::of(req);
  // ENOSYS once, and the kernel sends no more OPENDIR or RELEASEDIR.
  if (fs.no_opendir()) return static_cast<void>(reply_status(req, -ENOSYS));
  // A kernel without it: the same handle-less reading, the same cache policy.
  const bool cacheable = !fs.inode(ino).protected_path.load();
  fi->cache_readdir = cacheable ? 1 : 0;
  fi->keep_cache = cacheable ? 1 : 0;
  fi->fh = 0;
  fuse_reply_open(req, fi);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* /*fi*/) {
  guarded(req, "readdir", [&] { do_readdir(req, ino, size, off, false); });
}

void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    fuse_file_info* /*fi*/) {
  guarded(req, "readdirplus", [&] { do_readdir(req, ino, size, off, true); });
}

void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* /*fi*/) {
  guarded(req, "fsyncdir", [&] {
    DirStream d;
    int res = open_dir(Filesystem::of(req).inode(ino), &d);
    if (res == 0) {
      const int fd = ::dirfd(d.dp);
      res = (datasync ? ::fdatasync(fd) : ::fsync(fd)) == 0 ? 0 : -errno;
    }
    reply_status(req, res);
  });
}

}  // namespace leasefs::fuse

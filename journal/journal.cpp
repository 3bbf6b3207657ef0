#include "journal/journal.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/beneath.hpp"
#include "base/failpoint.hpp"
#include "base/no_atime.hpp"
#include "base/sha256.hpp"
#include "base/would_block.hpp"
#include "journal/kept_paths.hpp"
#include "journal/retention.hpp"
#include "journal/xattrs.hpp"

namespace leasefs::journal {

namespace {

// The names in the directory at `path` (none when it is not one, or is gone).
std::vector<std::string> names_in(int root_fd, const std::string& path) {
  std::vector<std::string> names;
  base::UniqueFd d = base::open_beneath(root_fd, path, O_RDONLY | O_DIRECTORY);
  if (!d) return names;
  DIR* dir = ::fdopendir(d.release());
  if (!dir) return names;
  while (dirent* de = ::readdir(dir)) {
    if (std::strcmp(de->d_name, ".") == 0 || std::strcmp(de->d_name, "..") == 0) continue;
    names.emplace_back(de->d_name);
  }
  ::closedir(dir);
  return names;
}

int64_t ns_of(const timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// What an entry keeps of a name's inode.
void take_stat(Entry& e, const struct stat& st) {
  e.mode = st.st_mode;
  e.uid = st.st_uid;
  e.gid = st.st_gid;
  e.atime_ns = ns_of(st.st_atim);
  e.mtime_ns = ns_of(st.st_mtim);
  e.size = static_cast<uint64_t>(st.st_size);
  e.ino = st.st_ino;
  e.nlink = st.st_nlink;
}

// Copies [0, size) of `src` to `dst` (copy_file_range, or read and write).
int copy_range(int src, int dst, uint64_t size) {
  off_t in = 0, out = 0;
  uint64_t left = size;
  while (left > 0) {
    ssize_t n = ::copy_file_range(src, &in, dst, &out, left, 0);
    if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) {
      break;  // plain copy below
    }
    if (n < 0) return -errno;
    if (n == 0) return 0;  // the file shrank meanwhile: what there was is kept
    left -= static_cast<uint64_t>(n);
  }
  if (left == 0) return 0;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::pread(src, buf, sizeof buf, in);
    if (n < 0) return -errno;
    if (n == 0) return 0;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::pwrite(dst, buf + done, static_cast<size_t>(n - done), out);
      if (w < 0) return -errno;
      done += w;
      out += w;
    }
    in += n;
  }
}

}  // namespace

Journal::Journal(int root_fd, int longrun_fd, Options options)
    : root_(::openat(root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)),
      longrun_(::openat(longrun_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)),
      options_(options) {
  if (!root_ || !longrun_) throw std::system_error(errno, std::generic_category(), "journal");
  if (::mkdirat(longrun_.get(), "journal", 0700) != 0 && errno != EEXIST) {
    throw std::system_error(errno, std::generic_category(), "create .longrun/journal");
  }
  dir_.reset(::openat(longrun_.get(), "journal", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_) throw std::system_error(errno, std::generic_category(), "open .longrun/journal");
  ::fchmod(dir_.get(), 0700);
  kept_ = turns();
  // Until a turn is opened (its first mutation), status counts every turn kept
  // as older: on a full disk after a restart it must still say what holds the space.
  for (uint64_t t : kept_) older_bytes_ += turn_bytes(t);
}

Journal::~Journal() {
  if (index_ && unsynced_) ::fdatasync(index_.get());
}

void Journal::set_listener(std::function<void(const Entry&)> fn) {
  std::lock_guard lock(mu_);
  std::lock_guard publishing(publish_mu_);
  listener_ = std::move(fn);
}

void Journal::publish(std::unique_lock<std::mutex>& lock) {
  if (heard_.empty()) return;
  std::vector<Entry> heard;
  heard.swap(heard_);
  // Taken before mu_ is let go: calls publish in the order they recorded.
  std::lock_guard publishing(publish_mu_);
  lock.unlock();
  for (const Entry& e : heard) listener_(e);
}

Journal::Summary Journal::summary(uint64_t turn) const {
  {
    auto lock = base::lock_or_would_block(mu_);
    if (turn == turn_) return {bytes_, kept_.size(), not_undoable_, older_bytes_};
    // A turn not opened yet (its first mutation opens it): the one recorded last
    // is older now too, so status and the console still say what holds the space.
    if (turn_ == kNoTurn || turn > turn_) {
      return {0, kept_.size(), {}, older_bytes_ + (turn_ == kNoTurn ? 0 : bytes_)};
    }
    if (std::find(kept_.begin(), kept_.end(), turn) == kept_.end()) return {0, kept_.size(), {}};
  }
  base::would_block_here();
  return {turn_bytes(turn), turns().size(), {}};
}

int Journal::open_turn_locked(uint64_t turn) {
  if (turn == turn_ && index_) return 0;
  const std::string name = std::to_string(turn);
  if (::mkdirat(dir_.get(), name.c_str(), 0700) != 0 && errno != EEXIST) return -errno;
  base::UniqueFd d(
      ::openat(dir_.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!d) return -errno;
  base::UniqueFd idx(::openat(d.get(), "index.jsonl",
                              O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!idx) return -errno;
  if (::fsync(d.get()) != 0 || ::fsync(dir_.get()) != 0) return -errno;
  if (index_ && unsynced_) ::fdatasync(index_.get());
  unsynced_ = false;
  pending_dirs_.clear();
  // A restart within a turn: what the turn already holds stays its first pre-image.
  const uint64_t previous = turn_;
  turn_ = turn;
  paths_.clear();
  inodes_.clear();
  appended_.clear();
  appended_inodes_.clear();
  not_undoable_.clear();
  seq_ = 0;
  turn_dir_ = std::move(d);
  index_ = std::move(idx);
  for (const Entry& e : entries(turn)) {
    if (!e.is_fact()) paths_.insert(e.path);
    seq_ = std::max(seq_, e.seq);
    if (!e.undoable) not_undoable_.push_back(e.path);
    if (e.appended) appended_[e.path] = {e.size, 0, e.ino};
    if (e.kind == EntryKind::kContent) appended_.erase(e.path);
  }
  for (auto& [path, a] : appended_) {
    // The device is not in the index: the file at the path now, if it is still that inode.
    std::string name;
    base::UniqueFd parent = base::open_parent(root_.get(), path, &name);
    struct stat st {};
    if (parent && ::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        st.st_ino == a.ino) {
      a.dev = st.st_dev;
      appended_inodes_[{a.dev, a.ino}] = path;
    }
  }
  bytes_ = dir_bytes(turn_dir_.get());
  // A new turn: retention runs now, once, not on every later mutation (it
  // touches only older turns' directories).
  if (previous != turn) prune(turn);
  kept_ = turns();
  return 0;
}

int Journal::save_content_locked(int src, uint64_t size, Entry& e) {
  if (size > options_.max_file_bytes) {
    e.undoable = false;
    e.why = "larger than the per-file cap (" + std::to_string(options_.max_file_bytes) + " bytes)";
    return 0;
  }
  if (bytes_ + size > options_.max_turn_bytes) {
    e.undoable = false;
    e.why =
        "the turn's journal is full (cap " + std::to_string(options_.max_turn_bytes) + " bytes)";
    return 0;
  }
  auto metadata_only = [&e] {
    e.blob.clear();
    e.undoable = false;
    e.why = "the disk is full";
    return 0;
  };
  if (reserve_ && reserve_->full()) return metadata_only();
  e.blob = "b" + std::to_string(e.seq);
  base::UniqueFd out(::openat(turn_dir_.get(), e.blob.c_str(),
                              O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!out) return -errno;
  // A clone shares the file's blocks; a copy must leave the disk its floor.
  const bool cloned = ::ioctl(out.get(), FICLONE, src) == 0;
  if (!cloned) {
    const Space space = space_of(turn_dir_.get());
    if (space.total > 0 && space.avail < size + space.floor()) {
      out.reset();
      ::unlinkat(turn_dir_.get(), e.blob.c_str(), 0);
      e.blob.clear();
      e.undoable = false;
      e.why = "the disk is nearly full (" + std::to_string(space.avail >> 20) +
              " MiB free; the journal leaves " + std::to_string(space.floor() >> 20) + " MiB)";
      return 0;
    }
  }
  int r = cloned ? 0 : copy_range(src, out.get(), size);
  // A clone is of the whole file: a file grown by appends is kept as it was.
  if (r == 0 && ::ftruncate(out.get(), static_cast<off_t>(size)) != 0) r = -errno;
  if (r == 0) {
    base::failpoint("journal.after_blob_write");
    if (::fsync(out.get()) != 0) r = -errno;
  }
  if (r == -ENOSPC || r == -EDQUOT) {
    // The part copied goes back to the disk; the reserve goes too.
    out.reset();
    ::unlinkat(turn_dir_.get(), e.blob.c_str(), 0);
    if (reserve_) reserve_->no_space();
    return metadata_only();
  }
  if (r < 0) return r;
  if (::fsync(turn_dir_.get()) != 0) return -errno;
  bytes_ += size;
  return 0;
}

bool Journal::held(const Entry& e, bool lazy) const noexcept {
  return (lazy || e.kind == EntryKind::kAbsent) && options_.lazy_absent;
}

int Journal::append_locked(Entry& e, bool lazy) {
  std::string line = e.line();
  e.hash = base::sha256_hex(line);
  line += '\n';
  // "Did not exist" protects nothing a person had: its line is written before
  // the mutation (it survives a crash of the daemon; flush_locked at the end of
  // the call) but synced with the next entry that does protect something, or
  // when the turn's index is closed. Every other entry is on disk before its
  // mutation runs, with the held lines before it in the same write.
  if (held(e, lazy)) {
    held_lines_ += line;
    unsynced_ = true;
    if (e.kind == EntryKind::kDir) pending_dirs_.insert(e.path);
    bytes_ += line.size();
    return 0;
  }
  held_lines_ += line;
  bytes_ += line.size();  // taken back with the held lines' if the write fails
  if (int r = flush_locked(); r < 0) return r;
  if (::fdatasync(index_.get()) != 0) return -errno;
  unsynced_ = false;
  pending_dirs_.clear();
  base::failpoint("journal.after_index");
  return 0;
}

int Journal::flush_locked() {
  if (held_lines_.empty()) return 0;
  base::failpoint("journal.before_index");
  const ssize_t n = ::write(index_.get(), held_lines_.data(), held_lines_.size());
  if (n != static_cast<ssize_t>(held_lines_.size())) {
    const int r = n < 0 && errno ? -errno : -EIO;
    // Not written: the turn goes on as if these entries had never been made, so
    // that the next mutation of their paths records them again.
    for (const auto& [e, in_paths] : held_) {
      if (in_paths) paths_.erase(e.path);
      pending_dirs_.erase(e.path);
    }
    if (!held_.empty()) seq_ = held_.front().first.seq - 1;
    bytes_ -= std::min<uint64_t>(bytes_, held_lines_.size());
    held_.clear();
    held_lines_.clear();
    return r;
  }
  held_lines_.clear();
  if (listener_) {
    for (auto& [e, in_paths] : held_) heard_.push_back(std::move(e));
  }
  held_.clear();
  return 0;
}

int Journal::record_locked(uint64_t turn, const std::string& path, std::string_view origin,
                           bool as_parent, bool append) {
  if (int r = open_turn_locked(turn); r < 0) return r;
  if (!append && appended_.contains(path)) {
    if (int r = keep_appended_locked(path); r < 0) return r;
  }
  if (paths_.contains(path)) {
    // A directory kept only as a parent is made durable before it is itself changed.
    if (!as_parent && pending_dirs_.contains(path)) {
      if (int r = flush_locked(); r < 0) return r;  // its line may still be held
      if (::fdatasync(index_.get()) != 0) return -errno;
      unsynced_ = false;
      pending_dirs_.clear();
    }
    return 0;
  }
  // The directory holding it first: a create, unlink or rename changes its
  // times before any pre-image of the directory itself would be taken.
  if (const size_t slash = path.rfind('/'); slash != std::string::npos) {
    const std::string parent = path.substr(0, slash);
    if (!paths_.contains(parent)) {
      if (int r = record_locked(turn, parent, origin, true); r < 0) return r;
    }
  }
  Entry e;
  e.seq = seq_ + 1;
  e.turn = turn;
  e.path = path;
  e.origin = std::string(origin);
  std::string name;
  base::UniqueFd parent = base::open_parent(root_.get(), path, &name);
  struct stat st {};
  if (!parent || ::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP && errno != EXDEV) return -errno;
    e.kind = EntryKind::kAbsent;
  } else {
    take_stat(e, st);
    // Kept whole under another name already: this name too, for undo puts both back in place.
    if (append && inodes_.contains({st.st_dev, st.st_ino})) append = false;
    if (S_ISREG(st.st_mode) && !append) {
      // Another name of a file kept appended-only: its bytes first (a hard link).
      auto other = appended_inodes_.find({st.st_dev, st.st_ino});
      if (other != appended_inodes_.end()) {
        if (int r = keep_appended_locked(std::string(other->second)); r < 0) return r;
      }
    }
    if (S_ISREG(st.st_mode)) {
      e.kind = EntryKind::kFile;
      base::UniqueFd f =
          base::openat_no_atime(parent.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (!f) return -errno;
      e.xattrs = read_xattrs(f.get());
      if (append) {
        e.appended = true;  // the bytes before e.size stay as they are: nothing to copy
      } else if (int r = save_content_locked(f.get(), static_cast<uint64_t>(st.st_size), e);
                 r < 0) {
        return r;
      }
    } else if (S_ISDIR(st.st_mode)) {
      e.kind = EntryKind::kDir;
      base::UniqueFd f(
          ::openat(parent.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (f) e.xattrs = read_xattrs(f.get());
    } else if (S_ISLNK(st.st_mode)) {
      e.kind = EntryKind::kSymlink;
      std::string buf(static_cast<size_t>(st.st_size) + 1, '\0');
      ssize_t n = ::readlinkat(parent.get(), name.c_str(), buf.data(), buf.size());
      if (n < 0) return -errno;
      buf.resize(static_cast<size_t>(n));
      e.target = std::move(buf);
    } else {
      e.kind = EntryKind::kOther;
      e.undoable = false;
      e.why = "not a file, directory or symlink";
    }
  }
  // A directory kept because an entry in it changes protects only its times
  // (its entries are kept one by one): synced with the next protecting entry,
  // or before the directory itself is changed (above).
  const bool lazy = as_parent && e.kind == EntryKind::kDir;
  if (int r = append_locked(e, lazy); r < 0) return r;
  seq_ = e.seq;
  paths_.insert(path);
  if (e.appended) {
    appended_[path] = {e.size, st.st_dev, st.st_ino};
    appended_inodes_[{st.st_dev, st.st_ino}] = path;
  } else if (e.kind == EntryKind::kFile || (e.kind == EntryKind::kDir && !lazy)) {
    inodes_.insert({st.st_dev, st.st_ino});
  }
  if (!e.undoable) not_undoable_.push_back(path);
  if (held(e, lazy)) {
    held_.emplace_back(std::move(e), true);  // the listener hears of it once written
  } else if (listener_) {
    heard_.push_back(std::move(e));
  }
  return 0;
}

int Journal::before(uint64_t turn, std::string_view path, std::string_view origin) {
  if (!options_.enabled || !journaled_path(path)) return 0;
  return under_lock([&] { return record_locked(turn, std::string(path), origin); });
}

int Journal::before_append(uint64_t turn, std::string_view path) {
  if (!options_.enabled || !journaled_path(path)) return 0;
  return under_lock([&] { return record_locked(turn, std::string(path), {}, false, true); });
}

int Journal::keep_appended_locked(const std::string& path) {
  auto it = appended_.find(path);
  if (it == appended_.end()) return 0;
  const Appended a = it->second;
  Entry e;
  e.seq = seq_ + 1;
  e.turn = turn_;
  e.kind = EntryKind::kContent;
  e.path = path;
  e.size = a.size;
  e.ino = a.ino;
  std::string name;
  base::UniqueFd parent = base::open_parent(root_.get(), path, &name);
  base::UniqueFd f =
      parent ? base::openat_no_atime(parent.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
             : base::UniqueFd();
  struct stat st {};
  if (!f || ::fstat(f.get(), &st) != 0 || st.st_dev != a.dev || st.st_ino != a.ino ||
      static_cast<uint64_t>(st.st_size) < a.size) {
    // Changed underneath the mount since (the daemon saw no other change).
    e.undoable = false;
    e.why = "changed outside the mount after an append";
  } else if (int r = save_content_locked(f.get(), a.size, e); r < 0) {
    return r;
  }
  if (int r = append_locked(e, false); r < 0) return r;
  seq_ = e.seq;
  appended_.erase(path);
  appended_inodes_.erase({a.dev, a.ino});
  inodes_.insert({a.dev, a.ino});
  if (!e.undoable) not_undoable_.push_back(path);
  if (listener_) heard_.push_back(std::move(e));
  return 0;
}

int Journal::before_tree(uint64_t turn, std::string_view path, std::string_view origin) {
  if (!options_.enabled || !journaled_path(path)) return 0;
  return under_lock([&] { return tree_locked(turn, path, origin); });
}

int Journal::tree_locked(uint64_t turn, std::string_view path, std::string_view origin) {
  std::vector<std::string> todo{std::string(path)};
  while (!todo.empty()) {
    std::string p = std::move(todo.back());
    todo.pop_back();
    if (int r = record_locked(turn, p, origin); r < 0) return r;
    for (const std::string& name : names_in(root_.get(), p)) todo.push_back(p + "/" + name);
  }
  return 0;
}

int Journal::before_arrival(uint64_t turn, std::string_view from, std::string_view to) {
  if (!options_.enabled || !journaled_path(from) || !journaled_path(to)) return 0;
  return under_lock([&] { return arrival_locked(turn, from, to); });
}

int Journal::arrival_locked(uint64_t turn, std::string_view from, std::string_view to) {
  std::vector<std::string> todo{std::string(from)};
  while (!todo.empty()) {
    std::string p = std::move(todo.back());
    todo.pop_back();
    for (const std::string& name : names_in(root_.get(), p)) {
      std::string below = p + "/" + name;
      const std::string arrives = std::string(to) + below.substr(from.size());
      if (int r = record_locked(turn, arrives, {}); r < 0) return r;
      todo.push_back(std::move(below));
    }
  }
  return 0;
}

int Journal::before_rename(uint64_t turn, std::string_view from, bool from_is_dir,
                           std::string_view to, bool to_is_dir, bool exchange) {
  if (!options_.enabled) return 0;
  return under_lock(
      [&] { return rename_locked(turn, from, from_is_dir, to, to_is_dir, exchange); });
}

int Journal::rename_locked(uint64_t turn, std::string_view from, bool from_is_dir,
                           std::string_view to, bool to_is_dir, bool exchange) {
  // A directory moves with everything it holds: each of its names is kept, so
  // that an undo can put the subtree back where it was.
  auto one = [&](std::string_view path, bool is_dir) {
    if (!journaled_path(path)) return 0;
    return is_dir ? tree_locked(turn, path, {}) : record_locked(turn, std::string(path), {});
  };
  if (int r = one(from, from_is_dir); r < 0) return r;
  if (int r = one(to, to_is_dir); r < 0) return r;
  if (!journaled_path(from) || !journaled_path(to)) return 0;
  // What arrives beneath a directory that stays (an exchange, or a rename over an
  // empty directory) is kept as it was there, mostly absent, so that undo clears
  // it again. A name that was absent or a file, undo puts back whole anyway.
  if (from_is_dir && to_is_dir) {
    if (int r = arrival_locked(turn, from, to); r < 0) return r;
    if (exchange) {
      if (int r = arrival_locked(turn, to, from); r < 0) return r;
    }
  }
  if (int r = open_turn_locked(turn); r < 0) return r;
  Entry e;
  e.seq = seq_ + 1;
  e.turn = turn;
  e.kind = EntryKind::kRename;
  e.path = std::string(from);
  e.target = std::string(to);
  // Not synced on its own: undo never needs it, the next entry's sync carries it.
  std::string line = e.line();
  e.hash = base::sha256_hex(line);
  line += '\n';
  held_lines_ += line;
  bytes_ += line.size();
  seq_ = e.seq;
  held_.emplace_back(std::move(e), false);
  return 0;
}

int Journal::keep_leftover(uint64_t turn, std::string_view path, dev_t dev, ino_t ino) {
  if (!options_.enabled || !journaled_path(path)) return -ENOTSUP;
  std::unique_lock lock(mu_);
  if (int r = open_turn_locked(turn); r < 0) return r;
  std::string name;
  base::UniqueFd parent = base::open_parent(root_.get(), path, &name);
  struct stat st {};
  if (!parent || ::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return -errno;
  }
  if (st.st_dev != dev || st.st_ino != ino || !S_ISREG(st.st_mode)) return -ESTALE;
  Entry e;
  e.seq = seq_ + 1;
  e.turn = turn;
  e.kind = EntryKind::kLeftover;
  e.path = std::string(path);
  take_stat(e, st);
  if (st.st_nlink > 1) {
    // Another name keeps the file (a link made under another grant): keep a copy
    // and remove this name only; the file itself is not the journal's.
    base::UniqueFd f =
        base::openat_no_atime(parent.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat opened {};
    if (!f || ::fstat(f.get(), &opened) != 0) return -errno;
    if (opened.st_dev != dev || opened.st_ino != ino) return -ESTALE;
    if (int r = save_content_locked(f.get(), static_cast<uint64_t>(st.st_size), e); r < 0) {
      return r;
    }
    if (::unlinkat(parent.get(), name.c_str(), 0) != 0) return -errno;
  } else {
    e.blob = "b" + std::to_string(e.seq);
    // The name could change between the stat and the move: check what moved, and
    // put back anything else.
    if (::renameat2(parent.get(), name.c_str(), turn_dir_.get(), e.blob.c_str(),
                    RENAME_NOREPLACE) != 0) {
      return -errno;
    }
    struct stat moved {};
    if (::fstatat(turn_dir_.get(), e.blob.c_str(), &moved, AT_SYMLINK_NOFOLLOW) != 0 ||
        moved.st_dev != dev || moved.st_ino != ino) {
      ::renameat2(turn_dir_.get(), e.blob.c_str(), parent.get(), name.c_str(), RENAME_NOREPLACE);
      return -ESTALE;
    }
    // A blob like any other: the daemon's, 0600 (no set-id bit survives).
    ::fchownat(turn_dir_.get(), e.blob.c_str(), 0, 0, AT_SYMLINK_NOFOLLOW);
    ::fchmodat(turn_dir_.get(), e.blob.c_str(), 0600, 0);
    if (::fsync(turn_dir_.get()) != 0) return -errno;
    bytes_ += e.size;
  }
  const bool moved = st.st_nlink <= 1;
  if (int r = append_locked(e, false); r < 0) return r;
  seq_ = e.seq;
  if (listener_) heard_.push_back(std::move(e));
  publish(lock);
  return moved ? 1 : 0;
}

bool Journal::inode_seen(uint64_t turn, dev_t dev, ino_t ino, bool append) {
  std::lock_guard lock(mu_);
  return turn == turn_ &&
         (inodes_.contains({dev, ino}) || (append && appended_inodes_.contains({dev, ino})));
}

void Journal::remember_inode(uint64_t turn, dev_t dev, ino_t ino) {
  std::lock_guard lock(mu_);
  if (turn == turn_) inodes_.insert({dev, ino});
}

}  // namespace leasefs::journal

#include "journal/retention.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/disk_reserve.hpp"
#include "base/tree_at.hpp"
#include "journal/journal.hpp"
#include "journal/preimages.hpp"

namespace leasefs::journal {

uint64_t dir_bytes(int dirfd) {
  uint64_t total = 0;
  int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return 0;
  }
  while (dirent* de = ::readdir(d)) {
    struct stat st {};
    if (::fstatat(::dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
      total += static_cast<uint64_t>(st.st_blocks) * 512;
    }
  }
  ::closedir(d);
  return total;
}

uint64_t Space::floor() const noexcept {
  const uint64_t reserve = std::min<uint64_t>(base::DiskReserve::kMaxBytes, total / 8);
  return std::max(2 * reserve, total / 20);
}

Space space_of(int fd) {
  struct statvfs sv {};
  if (::fstatvfs(fd, &sv) != 0) return {};
  return {static_cast<uint64_t>(sv.f_blocks) * sv.f_frsize,
          static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize};
}

uint64_t Journal::turn_bytes(uint64_t turn) const {
  base::UniqueFd d(::openat(dir_.get(), std::to_string(turn).c_str(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  return d ? dir_bytes(d.get()) : 0;
}

void Journal::prune(uint64_t current) {
  std::vector<uint64_t> older;
  for (uint64_t t : turns()) {
    if (t < current) older.push_back(t);
  }
  uint64_t total = 0;
  std::vector<uint64_t> sizes;
  for (uint64_t t : older) {
    sizes.push_back(turn_bytes(t));
    total += sizes.back();
  }
  // Older turns may hold a quarter of what is theirs or free, and never more
  // than keep_bytes: a disk that fills up gives back its oldest undo first.
  const uint64_t room = (total + space_of(dir_.get()).avail) / 4;
  const uint64_t budget = std::min(options_.keep_bytes, room);
  for (size_t i = 0; i < older.size(); ++i) {
    const bool too_many = older.size() - i >= options_.keep_turns;
    if (!too_many && total <= budget) break;
    base::remove_tree_at(dir_.get(), std::to_string(older[i]).c_str());
    total -= sizes[i];
  }
  older_bytes_ = total;
  ::fsync(dir_.get());
}

std::vector<Journal::Pruned> Journal::prune_older(uint64_t current, uint64_t keep, bool dry_run) {
  std::vector<Pruned> out;
  std::lock_guard lock(mu_);
  std::vector<uint64_t> older;
  for (uint64_t t : turns()) {
    if (t < current) older.push_back(t);
  }
  const size_t kept = std::min<size_t>(older.size(), keep);
  older.resize(older.size() - kept);  // the newest `keep` stay
  for (uint64_t t : older) {
    Pruned p;
    p.turn = t;
    p.bytes = turn_bytes(t);
    for (const Entry& e : first_preimages(*this, t, {})) {
      if (e.undoable) p.paths.push_back(e.path);
    }
    if (!dry_run) base::remove_tree_at(dir_.get(), std::to_string(t).c_str());
    out.push_back(std::move(p));
  }
  if (!dry_run) {
    ::fsync(dir_.get());
    kept_ = turns();
    uint64_t total = 0;
    for (uint64_t t : kept_) {
      if (t < current) total += turn_bytes(t);
    }
    older_bytes_ = total;
  }
  return out;
}

}  // namespace leasefs::journal

#include "daemon/mount_watch.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/thread_name.hpp"

namespace leasefs::daemon {

namespace {

constexpr const char* kTable = "/proc/self/mountinfo";

}  // namespace

std::vector<service::ForeignMount> foreign_mounts(const std::vector<base::MountEntry>& table,
                                                  const std::vector<std::string>& paths,
                                                  const std::vector<uid_t>& trusted) {
  std::vector<service::ForeignMount> out;
  for (const auto& m : table) {
    // On the tree, beneath it, or over it (a mount on a parent covers it too),
    // whenever it was made: a mount id is reused as soon as it is freed, and one
    // made before the daemon lies in the tree it serves.
    const bool on_tree = std::any_of(paths.begin(), paths.end(), [&](const std::string& p) {
      return base::path_within(m.mount_point, p) || base::path_within(p, m.mount_point);
    });
    if (!on_tree) continue;
    const bool fuse = m.fstype.rfind("fuse", 0) == 0;
    const auto owner = base::fuse_owner(m);
    if (!fuse && !owner) continue;  // only root makes those
    // A FUSE mount without user_id= is not one the kernel made: fail closed.
    if (owner && std::find(trusted.begin(), trusted.end(), *owner) != trusted.end()) continue;
    out.push_back(
        {m.mount_id, m.mount_point, m.fstype, m.source, owner.value_or(static_cast<uid_t>(-1)), 0});
  }
  return out;
}

MountWatch::MountWatch(std::vector<std::string> paths, std::vector<uid_t> trusted)
    : paths_(std::move(paths)),
      trusted_(std::move(trusted)),
      // Opened before the table is read: a change after this wakes poll().
      table_fd_(::open(kTable, O_RDONLY | O_CLOEXEC)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  for (const auto& m : base::read_mountinfo()) before_.insert(m.mount_id);
}

MountWatch::~MountWatch() {
  stop();
}

std::optional<base::MountEntry> MountWatch::start(const std::string& mountpoint, Report report) {
  std::optional<base::MountEntry> own;
  for (auto& m : base::read_mountinfo()) {
    if (!before_.count(m.mount_id) && m.mount_point == mountpoint && m.fstype == "fuse.leasefs" &&
        base::fuse_owner(m) == ::geteuid()) {
      own = std::move(m);
    }
  }
  if (own) before_.insert(own->mount_id);
  report_ = std::move(report);
  if (!table_fd_ || !wake_fd_) {
    spdlog::error("mount watch: cannot open {}: mounts over the tree go unnoticed", kTable);
    return own;
  }
  judge();
  thread_ = std::thread([this] {
    base::name_this_thread("mount-watch");
    run();
  });
  return own;
}

void MountWatch::stop() {
  // The signal thread and the end of the loop may both stop it, at once.
  std::lock_guard lock(stop_mu_);
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  if (::write(wake_fd_.get(), &one, sizeof one) < 0) spdlog::warn("mount watch: wake failed");
  thread_.join();
}

void MountWatch::run() {
  while (true) {
    // The kernel flags POLLPRI (and POLLERR) on the table after every mount or
    // unmount in this namespace; the poll itself takes the flag down.
    pollfd fds[2] = {{table_fd_.get(), POLLPRI, 0}, {wake_fd_.get(), POLLIN, 0}};
    const int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      spdlog::error("mount watch: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[1].revents) return;
    if (fds[0].revents & (POLLPRI | POLLERR)) judge();
  }
}

void MountWatch::judge() {
  auto table = base::read_mountinfo();
  if (table.empty()) {
    // Never empty when read (there is always a root): unread, the last verdict stands.
    spdlog::warn("mount watch: cannot read {}; the last verdict stands", kTable);
    return;
  }
  auto found = foreign_mounts(table, paths_, trusted_);
  std::vector<int> ids;
  for (const auto& m : found) ids.push_back(m.mount_id);
  if (ids == last_) return;
  last_ = std::move(ids);
  report_(std::move(found));
}

}  // namespace leasefs::daemon

#include "tests/support/mounted_fs.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "daemon/mount_table.hpp"
#include "journal/journal.hpp"

namespace leasefs::test {

namespace stdfs = std::filesystem;

namespace {

// Aborting a FUSE connection fails every request still waiting on it, so a thread
// stuck in the kernel on this mount (and with it the process's exit) comes free.
void abort_fuse_connection(const std::string& mnt) {
  auto entry = base::leasefs_mount_at(mnt);
  if (!entry) return;
  const std::string connection = entry->device.substr(entry->device.find(':') + 1);
  const char* fusectl = "/sys/fs/fuse/connections";
  const std::string abort_file = std::string(fusectl) + "/" + connection + "/abort";
  if (::access(abort_file.c_str(), W_OK) != 0) {
    ::mount("fusectl", fusectl, "fusectl", 0, nullptr);
  }
  std::ofstream(abort_file) << "1";
}

}  // namespace

struct MountedFs::Watchdog {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

MountedFs::MountedFs(MountedFsOptions options) {
  base_ = make_temp_dir("leasefs-test-");
  backing_ = base_ + "/root";
  mnt_ = base_ + "/mnt";
  ::mkdir(backing_.c_str(), 0755);
  ::mkdir(mnt_.c_str(), 0755);
  ::chmod(base_.c_str(), 0755);
  root_fd_.reset(::open(backing_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd_) throw std::runtime_error("cannot open " + backing_);
  fs_ = std::make_unique<fuse::Filesystem>(root_fd_.get(), gate_, reporter_, options.fs);
  if (options.journal) {
    ::mkdir((backing_ + "/.longrun").c_str(), 0700);
    longrun_fd_.reset(::open((backing_ + "/.longrun").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    base::UniqueFd tree(::open(backing_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!longrun_fd_ || !tree) throw std::runtime_error("cannot open " + backing_ + "/.longrun");
    journal_ = std::make_unique<journal::Journal>(tree.get(), longrun_fd_.get());
    fs_->set_journal(journal_.get());
  }
  fuse::MountOptions mo;
  mo.fsname = backing_;
  session_ = std::make_unique<fuse::Session>(*fs_, mnt_, mo);
  loop_ = std::thread([this] {
    int res = session_->run();
    if (res != 0) fprintf(stderr, "fuse loop ended: %d\n", res);
  });

  dog_ = std::make_shared<Watchdog>();
  watchdog_ = std::thread([dog = dog_, mnt = mnt_, secs = options.watchdog_s] {
    std::unique_lock lock(dog->mu);
    if (dog->cv.wait_for(lock, std::chrono::seconds(secs), [&] { return dog->done; })) return;
    // The test hung: free whatever waits on the mount, leave no dead mount behind,
    // then end the process.
    fprintf(stderr, "watchdog: test exceeded %d s, aborting and unmounting %s\n", secs,
            mnt.c_str());
    abort_fuse_connection(mnt);
    RunOptions o;
    o.timeout_s = 10;
    run_argv({"fusermount3", "-uz", mnt}, o);
    ::_exit(3);
  });
}

MountedFs::~MountedFs() {
  stop();
  {
    std::lock_guard lock(dog_->mu);
    dog_->done = true;
  }
  dog_->cv.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  // Files created as other users may be read-only to us; we are root in these tests.
  remove_tree(base_);
}

void MountedFs::stop() {
  if (!session_) return;
  session_->stop();
  if (loop_.joinable()) loop_.join();
  session_->unmount();
  session_.reset();
  // If the kernel still thinks it is mounted (someone held it busy), detach it.
  RunOptions o;
  o.timeout_s = 10;
  run_argv({"fusermount3", "-uz", mnt_}, o);
  fs_.reset();
}

void MountedFs::grant() {
  gate_.publish(leased_snapshot(1));
}

void MountedFs::revoke() {
  gate_.publish(unleased_snapshot(2));
}

RunResult MountedFs::sh(const std::string& script, std::optional<uid_t> uid, int timeout_s) {
  RunOptions o;
  o.cwd = mnt_;
  o.uid = uid;
  o.timeout_s = timeout_s;
  return run_sh(script, o);
}

std::string tree_digest(const std::string& dir) {
  std::vector<std::string> lines;
  std::error_code ec;
  for (auto it = stdfs::recursive_directory_iterator(dir, ec);
       !ec && it != stdfs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string path = it->path().string();
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    std::ostringstream line;
    line << path.substr(dir.size()) << " mode=" << std::oct << st.st_mode << std::dec
         << " uid=" << st.st_uid << " gid=" << st.st_gid;
    if (S_ISREG(st.st_mode)) {
      line << " size=" << st.st_size;
      std::ifstream in(path, std::ios::binary);
      std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      line << " hash=" << std::hash<std::string>{}(content);
    } else if (S_ISLNK(st.st_mode)) {
      line << " -> " << stdfs::read_symlink(path, ec).string();
    }
    lines.push_back(line.str());
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace leasefs::test

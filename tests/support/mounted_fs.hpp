// A leasefs passthrough mounted in-process over a fresh temporary tree, with a
// bare gate::Gate whose snapshots the test publishes by hand. The backing tree
// (`backing()`) and the mountpoint (`mnt()`) are separate directories, so a test
// can compare what happened underneath with what it tried through the mount.
//
// Teardown always happens: the destructor stops the session, unmounts and joins;
// a watchdog lazily unmounts and ends the process if a test hangs past its
// deadline, so a stuck test never leaves a dead mount behind.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>

#include "fuse/filesystem.hpp"
#include "fuse/session.hpp"
#include "gate/gate.hpp"
#include "report/reporter.hpp"
#include "tests/support/run.hpp"
#include "tests/support/snapshots.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::test {

struct MountedFsOptions {
  fuse::FsOptions fs;
  int watchdog_s = 110;  // below ctest's 120 s timeout
  // A per-turn journal in backing()/.longrun (as the daemon has): leftovers are
  // moved into it rather than deleted.
  bool journal = false;
};

class MountedFs {
 public:
  explicit MountedFs(MountedFsOptions options = {});
  ~MountedFs();
  MountedFs(const MountedFs&) = delete;
  MountedFs& operator=(const MountedFs&) = delete;

  const std::string& base() const { return base_; }        // temp dir holding both
  const std::string& backing() const { return backing_; }  // the root underneath
  const std::string& mnt() const { return mnt_; }          // the mount
  gate::Gate& gate() { return gate_; }
  report::Reporter& reporter() { return reporter_; }
  const fuse::Filesystem& filesystem() const { return *fs_; }

  // An in-progress task holding one unrestricted grant for turn 1.
  void grant();
  // A task in progress with no grant for the current turn.
  void revoke();
  // Publishes an arbitrary snapshot.
  void publish(gate::GateSnapshot snapshot) { gate_.publish(std::move(snapshot)); }

  // `sh -c` inside the mount (cwd = mnt()), as root or as `uid`.
  RunResult sh(const std::string& script, std::optional<uid_t> uid = std::nullopt,
               int timeout_s = 60);

  void stop();  // idempotent; the destructor calls it

 private:
  std::string base_, backing_, mnt_;
  gate::Gate gate_;
  report::Reporter reporter_{gate_};
  base::UniqueFd root_fd_;
  base::UniqueFd longrun_fd_;
  std::unique_ptr<journal::Journal> journal_;
  std::unique_ptr<fuse::Filesystem> fs_;
  std::unique_ptr<fuse::Session> session_;
  std::thread loop_;
  std::thread watchdog_;
  struct Watchdog;
  std::shared_ptr<Watchdog> dog_;
};

// Sorted listing of a tree with types, modes, owners, sizes and content hashes
// (symlink targets for links). Equal digests: nothing changed underneath.
std::string tree_digest(const std::string& dir);

}  // namespace leasefs::test

// leasefs_bench_mount ROOT MOUNTPOINT [--xattr-enosys]: the passthrough with an
// allow-all snapshot (one in-progress task, one unrestricted grant) and the
// daemon's default protected globs, in the
// foreground until SIGTERM/SIGINT. For bench/fs_bench.sh only.
// Built a second time as leasefs_bench_mount_gate_off (gate_off.cpp): the gate's
// checks always allow there, and it publishes a snapshot with no task at all, so
// a write through it succeeds only if the checks really were taken out.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "base/heap_tuning.hpp"
#include "fuse/filesystem.hpp"
#include "fuse/session.hpp"
#include "gate/gate.hpp"
#include "gate/protected_paths.hpp"
#include "report/reporter.hpp"
#include "tests/support/snapshots.hpp"

using namespace leasefs;

int main(int argc, char** argv) {
  base::keep_freed_heap();  // as `leasefs mount` does
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s ROOT MOUNTPOINT [--xattr-enosys]\n", argv[0]);
    return 2;
  }
  fuse::FsOptions fo;
  // As `leasefs mount ROOT` over the root: nothing but this mount changes the
  // scratch tree's names, so a write is judged by its cached path.
  fo.stable_names = true;
  for (int i = 3; i < argc; ++i) {
    if (std::strcmp(argv[i], "--xattr-enosys") == 0) fo.xattr_enosys = true;
  }
  base::UniqueFd root(::open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) {
    std::perror(argv[1]);
    return 1;
  }
  gate::Gate gate;
  // As `leasefs mount` protects by default: with protected globs the gate needs
  // the path of every gated call, which the filesystem then resolves.
  gate.set_protected_globs(gate::default_protected_globs());
#ifdef LEASEFS_BENCH_GATE_OFF
  gate.publish(gate::GateSnapshot{});
#else
  gate.publish(leasefs::test::leased_snapshot(1));
#endif
  report::Reporter reporter(gate);  // no sink: reports go nowhere
  try {
    fuse::Filesystem fs(root.get(), gate, reporter, fo);
    fuse::MountOptions mo;
    mo.fsname = argv[1];
    mo.allow_other = ::geteuid() == 0;  // as daemon/cli_mount.cpp mounts it
    fuse::Session session(fs, argv[2], mo);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread waiter([&] {
      int sig = 0;
      sigwait(&set, &sig);
      session.stop();
    });
    std::printf("ready\n");
    std::fflush(stdout);
    session.run();
    pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}

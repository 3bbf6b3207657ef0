// agentuser_fake_mount UID BACKING MOUNTPOINT: what an agent with a shell can build
// without privilege: a FUSE mount of its own, calling itself leasefs, over a
// directory it owns, mirroring BACKING (which holds a .longrun/socket of the
// agent's choosing). Read-only; runs until SIGTERM.
//
// On a stock Debian system /dev/fuse is 0666 and the agent mounts this through
// fusermount3 itself. Where /dev/fuse is root's alone (some containers), root
// starts it with the real uid set to UID: the kernel then records the mount as
// UID's (user_id=UID, group_id=UID), as fusermount3 would have.
#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "fuse/filesystem.hpp"
#include "fuse/session.hpp"
#include "gate/gate.hpp"
#include "report/reporter.hpp"

using namespace leasefs;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s UID BACKING MOUNTPOINT\n", argv[0]);
    return 2;
  }
  // Its stdout says "ready" and nothing else: the tests read it.
  spdlog::set_level(spdlog::level::warn);
  const uid_t uid = static_cast<uid_t>(std::strtoul(argv[1], nullptr, 10));
  // The group too: FUSE lets in only the mounter's uid and gid (65534:65534 here).
  if (::geteuid() == 0 && (::setresgid(uid, 0, 0) != 0 || ::setresuid(uid, 0, 0) != 0)) {
    std::perror("setresuid");
    return 1;
  }
  base::UniqueFd root(::open(argv[2], O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) {
    std::perror(argv[2]);
    return 1;
  }
  gate::Gate gate;  // no task: every mutation refused
  report::Reporter reporter(gate);
  try {
    fuse::Filesystem fs(root.get(), gate, reporter, fuse::FsOptions{});
    fuse::MountOptions mo;
    mo.fsname = argv[2];
    mo.allow_other = false;  // an unprivileged user may not ask for it
    fuse::Session session(fs, argv[3], mo);
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

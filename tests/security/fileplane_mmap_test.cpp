// Shared mappings die with the lease (fuse/page_invalidator.hpp). The mapping
// lives in a child process run by the agent's uid, in lockstep with the test:
// the FUSE server runs in this process, and munmap/msync wait for writeback.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>

#include "tests/security/fileplane_support.hpp"
#include "tests/support/lockstep.hpp"

namespace leasefs::test::fileplane {
namespace {

// A child as the agent's uid (gid 65534, no supplementary groups), in lockstep
// with the test.
class Agent : public Lockstep {
 public:
  explicit Agent(const std::function<int(Lockstep&)>& body)
      : Lockstep(body, RunAs{kAgent, 65534}) {}
};

constexpr const char* kSeed = "0123456789abcdef";

class SharedMapping : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = in_backing(
        fs_, std::string("printf '%s' ") + kSeed + " > f; chown -R 65534:65534 . ; chmod 666 f");
    ASSERT_TRUE(r.ok()) << r.output;
    f_ = fs_.mnt() + "/f";
  }
  // Reads the file through the mount in a fresh process (no shared mapping).
  std::string read_through_mount() {
    auto r = fs_.sh("cat f", kAgent);
    return r.output;
  }
  MountedFs fs_;
  std::string f_;
};

// Maps `path` shared and writable; tells 'm' (or 'x' on failure).
void* map_shared(Lockstep& a, const std::string& path) {
  base::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  void* mem =
      fd ? ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0) : MAP_FAILED;
  a.tell(mem == MAP_FAILED ? 'x' : 'm');
  return mem;
}

// After the writeback of stores made after the revoke is refused, no reader
// through the mount sees the refused bytes.
TEST_F(SharedMapping, RefusedWritebackIsNotSeenByReaders) {
  fs_.grant();
  Agent agent([&](Lockstep& a) {
    void* mem = map_shared(a, f_);
    if (mem == MAP_FAILED) return 2;
    a.await();  // revoked
    std::memcpy(mem, "EVIL", 4);
    const int rc = ::msync(mem, 4096, MS_SYNC);
    a.tell(rc != 0 ? 'r' : 'w');
    a.await();
    ::munmap(mem, 4096);
    return 0;
  });
  ASSERT_EQ(agent.await_child(), 'm');
  fs_.revoke();
  agent.go();
  EXPECT_EQ(agent.await_child(), 'r') << "the writeback after the revoke was not refused";
  EXPECT_EQ(read_file(fs_.backing() + "/f"), kSeed);
  EXPECT_EQ(read_through_mount(), kSeed) << "a reader through the mount saw refused bytes";
  agent.go();
  EXPECT_EQ(agent.join(), 0);
}

// At a revocation, pages dirtied under the lease are written under it, at once;
// what is stored afterwards never is.
TEST_F(SharedMapping, RevocationSettlesWhatTheLeaseDirtied) {
  fs_.grant();
  Agent agent([&](Lockstep& a) {
    void* mem = map_shared(a, f_);
    if (mem == MAP_FAILED) return 2;
    std::memcpy(mem, "LEAS", 4);  // under the lease, never synced
    a.tell('s');
    a.await();  // revoked
    std::memcpy(static_cast<char*>(mem) + 4, "EVIL", 4);
    a.tell('s');
    a.await();
    ::munmap(mem, 4096);
    return 0;
  });
  ASSERT_EQ(agent.await_child(), 'm');
  ASSERT_EQ(agent.await_child(), 's');
  fs_.revoke();
  EXPECT_EQ(read_file(fs_.backing() + "/f"), "LEAS456789abcdef")
      << "pages dirtied under the lease were not written when it ended";
  agent.go();
  ASSERT_EQ(agent.await_child(), 's');
  agent.go();
  EXPECT_EQ(agent.join(), 0);  // munmap: the writeback is refused
  EXPECT_EQ(read_file(fs_.backing() + "/f"), "LEAS456789abcdef");
  EXPECT_EQ(read_through_mount(), "LEAS456789abcdef");
}

// Stores made while unleased and never synced must not ride on a later lease:
// `git add -A && git commit` under the next grant reads the file as it is.
TEST_F(SharedMapping, LaterLeasedCommitCannotPickThemUp) {
  ASSERT_TRUE(in_backing(fs_,
                         "export HOME=/tmp GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory "
                         "GIT_CONFIG_VALUE_0='*'; git init -q . && git add -A && "
                         "git -c user.name=t -c user.email=t@e commit -qm seed && "
                         "chown -R 65534:65534 .")
                  .ok());
  fs_.grant();
  Agent agent([&](Lockstep& a) {
    void* mem = map_shared(a, f_);
    if (mem == MAP_FAILED) return 2;
    a.await();  // revoked
    std::memcpy(mem, "EVIL", 4);
    a.tell('s');
    a.await();  // a new lease; the commit has run
    ::munmap(mem, 4096);
    return 0;
  });
  ASSERT_EQ(agent.await_child(), 'm');
  fs_.revoke();
  agent.go();
  ASSERT_EQ(agent.await_child(), 's');
  fs_.publish(leased(3, {{}}));
  auto r = fs_.sh(
      "export HOME=/tmp GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory "
      "GIT_CONFIG_VALUE_0='*'; echo new > g && git add -A && "
      "git -c user.name=t -c user.email=t@e commit -qm next && git show HEAD:f",
      kAgent);
  EXPECT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(r.output.find("EVIL"), std::string::npos) << r.output;
  agent.go();
  EXPECT_EQ(agent.join(), 0);
  EXPECT_EQ(read_file(fs_.backing() + "/f"), kSeed);
}

}  // namespace
}  // namespace leasefs::test::fileplane

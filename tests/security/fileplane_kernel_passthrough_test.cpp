// Read-only opens are read by the kernel straight from the backing file
// (fuse/io_modes.hpp), with no request to the daemon. What must still hold: such
// an fd never becomes a way to write (fcntl cannot change its access mode, a
// reopen through /proc/self/fd is a new open and gated, a shared writable mapping
// is refused), and its reads return the file as the daemon last wrote it. Each
// attempt runs as the agent's uid, in a child in lockstep with the test, while
// the test checks that the fd is indeed passed through.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "fuse/filesystem.hpp"
#include "tests/security/fileplane_support.hpp"
#include "tests/support/lockstep.hpp"

namespace leasefs::test::fileplane {
namespace {

class KernelPassthrough : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = in_backing(fs_, "printf 'original' > f; chown -R 65534:65534 .; chmod 666 f");
    ASSERT_TRUE(r.ok()) << r.output;
    f_ = fs_.mnt() + "/f";
#if LEASEFS_FUSE_PASSTHROUGH
    // Built with libfuse 3.18 and run as root on a kernel with passthrough: on.
    ASSERT_TRUE(fs_.filesystem().io_modes().enabled());
#endif
  }
  size_t passed_through() const {
    return fs_.filesystem().io_modes().passthrough_open();
  }
  bool on() const {
    return fs_.filesystem().io_modes().enabled();
  }

  MountedFs fs_{MountedFsOptions{.fs = {.passthrough_reads = true}}};
  std::string f_;
};

TEST_F(KernelPassthrough, AReadOnlyFdCannotBecomeWritable) {
  fs_.revoke();  // no lease: every write is refused
  Lockstep agent(
      [&](Lockstep& step) {
        const int fd = ::open(f_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return 1;
        step.tell('o');
        step.await();
        // fcntl changes only O_APPEND, O_NONBLOCK...; the access mode stays.
        if (::fcntl(fd, F_SETFL, O_RDWR | O_APPEND) != 0) return 2;
        if (::write(fd, "x", 1) != -1 || errno != EBADF) return 3;
        if (::pwrite(fd, "x", 1, 0) != -1 || errno != EBADF) return 4;
        // A reopen through the magic link is an open of the file for writing.
        const std::string self = "/proc/self/fd/" + std::to_string(fd);
        if (::open(self.c_str(), O_WRONLY | O_CLOEXEC) != -1 || errno != EACCES) return 5;
        if (::open(self.c_str(), O_RDWR | O_CLOEXEC) != -1 || errno != EACCES) return 6;
        // Nor can the fd be mapped to write through.
        void* mem = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (mem != MAP_FAILED || errno != EACCES) return 7;
        mem = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
        if (mem == MAP_FAILED) return 8;
        if (::mprotect(mem, 4096, PROT_READ | PROT_WRITE) != -1 || errno != EACCES) return 9;
        ::munmap(mem, 4096);
        return 0;
      },
      RunAs{kAgent, 65534});
  ASSERT_EQ(agent.await_child(), 'o');
  if (on()) {
    EXPECT_EQ(passed_through(), 1u);
  }
  agent.go();
  EXPECT_EQ(agent.join(), 0);
  EXPECT_EQ(read_file(fs_.backing() + "/f"), "original");
}

TEST_F(KernelPassthrough, ReadsSeeWhatTheDaemonWrote) {
  fs_.grant();
  const auto read_through = [&](const char* want) {
    Lockstep agent(
        [&](Lockstep& step) {
          const int fd = ::open(f_.c_str(), O_RDONLY | O_CLOEXEC);
          if (fd < 0) return 1;
          char buf[64] = {};
          const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
          if (n != static_cast<ssize_t>(strlen(want)) || std::string(buf, n) != want) return 2;
          void* mem = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
          if (mem == MAP_FAILED || std::string(static_cast<char*>(mem), n) != want) return 3;
          ::munmap(mem, 4096);
          step.tell('r');
          step.await();
          ::close(fd);
          return 0;
        },
        RunAs{kAgent, 65534});
    EXPECT_EQ(agent.await_child(), 'r');
    if (on()) {
      EXPECT_EQ(passed_through(), 1u);
    }
    agent.go();
    EXPECT_EQ(agent.join(), 0) << "reading " << want;
  };
  read_through("original");
  // Rewritten through the mount (by the daemon), then read by later opens.
  auto w = fs_.sh("printf 'rewritten' > f", kAgent);
  EXPECT_TRUE(w.ok()) << w.output;
  read_through("rewritten");
  auto e = fs_.sh("sed -i 's/re/un/' f && python3 -c \"print(open('f').read())\"", kAgent);
  EXPECT_TRUE(e.ok()) << e.output;
  EXPECT_EQ(e.output, "unwritten\n");
  read_through("unwritten");
  EXPECT_EQ(read_file(fs_.backing() + "/f"), "unwritten");
  EXPECT_EQ(passed_through(), 0u);  // every reader is gone
}

TEST_F(KernelPassthrough, AWriterBesideAPassedThroughReaderFailsBeforeTouchingTheFile) {
  fs_.grant();
  Lockstep reader(
      [&](Lockstep& step) {
        const int fd = ::open(f_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return 1;
        step.tell('r');
        step.await();
        ::close(fd);
        return 0;
      },
      RunAs{kAgent, 65534});
  ASSERT_EQ(reader.await_child(), 'r');
  if (on()) {
    ASSERT_EQ(passed_through(), 1u);
    // The kernel would fail any other open of the file after the daemon had
    // truncated it; the daemon refuses first, and the content stays.
    EXPECT_EQ(as_agent([&] { return err_of(::open(f_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC)); }),
              ETXTBSY);
    EXPECT_EQ(read_file(fs_.backing() + "/f"), "original");
  }
  reader.go();
  EXPECT_EQ(reader.join(), 0);
  // Once the reader is gone, writing works again.
  auto w = fs_.sh("printf 'after' > f && cat f", kAgent);
  EXPECT_TRUE(w.ok()) << w.output;
  EXPECT_EQ(w.output, "after");
}

TEST_F(KernelPassthrough, AReaderOpensBesideAWriter) {
  fs_.grant();
  // A file held open for writing: a read-only open beside it is served by the
  // daemon (the kernel allows one I/O mode per file at a time), and both work.
  Lockstep writer(
      [&](Lockstep& step) {
        const int fd = ::open(f_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0) return 1;
        step.tell('w');
        step.await();
        if (::write(fd, "+more", 5) != 5) return 2;
        ::close(fd);
        return 0;
      },
      RunAs{kAgent, 65534});
  ASSERT_EQ(writer.await_child(), 'w');
  auto r = fs_.sh("cat f", kAgent);
  EXPECT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(r.output, "original");
  writer.go();
  EXPECT_EQ(writer.join(), 0);
  auto again = fs_.sh("cat f; cp f g; cat g", kAgent);
  EXPECT_EQ(again.output, "original+moreoriginal+more");
}

}  // namespace
}  // namespace leasefs::test::fileplane

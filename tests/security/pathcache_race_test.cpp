// Attack class: the cached path outliving what it stood for. A revocation (or
// the end of the turn) between two writes refuses the second whatever is cached;
// the daemon's own undo changing names underneath leaves no byte of a later
// write where the grant does not reach; and many writers racing many renamers
// through the mount leave no cached path older than the last rename: once the
// renames are done and the grant for docs/ is revoked, no byte lands in docs/.
// A rename that saw a file may move a directory made there since: the
// directory's cached path must not outlive the move.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "tests/security/pathcache_fixture.hpp"

namespace leasefs::test::pathcache {
namespace {

TEST_F(PathCacheTest, RevocationBetweenTwoWritesRefusesTheSecond) {
  for (const std::string how : {"revoke", "turn"}) {
    const std::string g = grant({"src/**"});
    Lockstep child(
        [&](Lockstep& step) {
          int fd = ::open(at("src/a.c").c_str(), kWr);
          if (fd < 0) return bail(step, 1);
          if (write_errno(fd, "1\n") != 0) return bail(step, 2);
          step.tell('w');
          step.await();
          return expect_errno(write_errno(fd, "LEAK\n"), EACCES, 3);
        },
        kAgent);
    ASSERT_EQ(child.await_child(), 'w') << "child exited " << child.join() << how;
    if (how == "revoke") {
      revoke(g);
    } else {
      ASSERT_TRUE(call("turn").value("ok", false));
    }
    child.go();
    EXPECT_EQ(child.join(), 0) << how;
  }
  stop_daemon();
  EXPECT_EQ(underneath("src/a.c"), "a\n1\n1\n");
}

// Undo puts a turn's names back: the file the agent holds open at src/b.c
// (moved there from docs/ in the undone turn) loses that name, and docs/b.c
// comes back. Nothing the agent writes afterwards reaches docs/b.c.
TEST_F(PathCacheTest, UndoMovingNamesLeavesNoWriteOutOfScope) {
  const json st = call("status");
  const uint64_t t1 = st["result"].value("turn", uint64_t{0});
  grant({"src/**", "docs/**"});
  ASSERT_EQ(run_sh_as(kAgentUid, kAgentGid, "mv docs/b.c src/b.c", d_.root()).exit_code, 0);
  ASSERT_TRUE(call("turn").value("ok", false));
  grant({"src/**"});
  Lockstep child(
      [&](Lockstep& step) {
        int fd = ::open(at("src/b.c").c_str(), kWr);
        if (fd < 0) return bail(step, 1);
        if (write_errno(fd, "1\n") != 0) return bail(step, 2);
        step.tell('w');
        step.await();
        (void)write_errno(fd, "LEAK\n");  // to a file with no name left, or refused
        return 0;
      },
      kAgent);
  ASSERT_EQ(child.await_child(), 'w') << "child exited " << child.join();
  json u = call("undo", {{"turn", t1}, {"force", true}});
  ASSERT_TRUE(u.value("ok", false)) << u.dump();
  child.go();
  EXPECT_EQ(child.join(), 0);
  stop_daemon();
  EXPECT_EQ(underneath("docs/b.c"), "b\n");
  EXPECT_EQ(::access((d_.root() + "/src/b.c").c_str(), F_OK), -1);
}

TEST_F(PathCacheTest, WritersRacingRenamersLeaveNoByteOutOfScope) {
  constexpr int kFiles = 8;
  grant({"src/**"});
  const std::string b = grant({"docs/**"});
  auto name = [](const char* dir, int i) { return std::string(dir) + "/f" + std::to_string(i); };
  Lockstep child(
      [&](Lockstep& step) {
        std::vector<int> fds;
        for (int i = 0; i < kFiles; ++i) {
          int fd = ::open(at(name("src", i)).c_str(), kWr | O_CREAT | O_EXCL, 0644);
          if (fd < 0) return bail(step, 1);
          fds.push_back(fd);
        }
        std::atomic<bool> stop_renames{false}, stop_writes{false};
        std::atomic<bool> phase2{false};
        std::atomic<int> bad{0};
        std::vector<std::thread> writers, renamers;
        for (int w = 0; w < 4; ++w) {
          writers.emplace_back([&, w] {
            for (unsigned k = w; !stop_writes.load(); ++k) {
              const bool late = phase2.load();
              (void)write_errno(fds[k % kFiles], late ? "2" : "1");
            }
          });
        }
        for (int r = 0; r < 3; ++r) {
          renamers.emplace_back([&, r] {
            for (unsigned k = r; !stop_renames.load(); k += 3) {
              const int i = static_cast<int>(k % kFiles);
              const std::string s = at(name("src", i)), d = at(name("docs", i));
              if (k % 5 == 0) {
                const int j = static_cast<int>((k / 5) % kFiles);
                if (j != i) {
                  (void)::renameat2(AT_FDCWD, s.c_str(), AT_FDCWD, at(name("docs", j)).c_str(),
                                    RENAME_EXCHANGE);
                }
              } else if (::rename(s.c_str(), d.c_str()) != 0) {
                (void)::rename(d.c_str(), s.c_str());
              }
            }
          });
        }
        std::this_thread::sleep_for(std::chrono::seconds(3));
        stop_renames = true;
        for (auto& t : renamers) t.join();
        step.tell('r');
        step.await();  // docs/** is revoked now
        phase2 = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        stop_writes = true;
        for (auto& t : writers) t.join();
        // Each descriptor once more: refused exactly when its file is in docs/.
        for (int fd : fds) {
          struct stat st {};
          if (::fstat(fd, &st) != 0) return 2;
          bool in_docs = false;
          for (int i = 0; i < kFiles; ++i) {
            struct stat ds {};
            if (::stat(at(name("docs", i)).c_str(), &ds) == 0 && ds.st_ino == st.st_ino) {
              in_docs = true;
            }
          }
          if (write_errno(fd, "2") != (in_docs ? EACCES : 0)) bad++;
        }
        return bad.load() == 0 ? 0 : 3;
      },
      kAgent);
  ASSERT_EQ(child.await_child(), 'r') << "child exited " << child.join();
  revoke(b);
  child.go();
  EXPECT_EQ(child.join(30), 0);
  stop_daemon();
  int in_docs = 0;
  for (int i = 0; i < kFiles; ++i) {
    const std::string s = underneath(name("src", i)), d = underneath(name("docs", i));
    if (!d.empty() || ::access((d_.root() + "/" + name("docs", i)).c_str(), F_OK) == 0) {
      ++in_docs;
      EXPECT_EQ(d.find('2'), std::string::npos) << name("docs", i) << " got a late write";
    }
  }
  // Both sides were reached (the race moved files); not a bound on how many.
  RecordProperty("files_in_docs", in_docs);
}

// A rename keeps directories' cached paths when it saw a file at its old name,
// unless another change overlapped it (fuse/path_cache.hpp). The agent races
// one: a renamer moves whatever is at src/n into docs/ while a swapper turns
// src/n from a file into a directory (by exchanging the two) and makes an entry
// in it (which caches the directory's path as src/n). docs/ is granted for renames only; right
// after each move the renamer makes an entry in what it moved: in a directory that went to docs/ it
// must be refused, and never land.
TEST_F(PathCacheTest, ADirectorySwappedInUnderARenameIsJudgedByWhereItWent) {
  grant({"src/**"});
  json g = call("grant", {{"reason", "pathcache"}, {"paths", {"docs/**"}}, {"ops", {"rename"}}});
  ASSERT_TRUE(g.value("ok", false)) << g.dump();
  Lockstep child(
      [&](Lockstep&) {
        std::atomic<bool> stop{false};
        std::atomic<int> landed{0};
        std::thread renamer([&] {
          for (unsigned k = 0; !stop.load(); ++k) {
            const std::string to = at("docs/m" + std::to_string(k));
            if (::rename(at("src/n").c_str(), to.c_str()) != 0) continue;
            struct stat st {};
            if (::stat(to.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
            const int fd =
                ::open((to + "/probe").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (fd >= 0 || errno != EACCES) ++landed;
            if (fd >= 0) ::close(fd);
          }
        });
        // The swapper: a file at src/n, exchanged with a directory (one step),
        // and an entry made in it there.
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        for (unsigned k = 0; std::chrono::steady_clock::now() < until; ++k) {
          const std::string dir = at("src/d" + std::to_string(k));
          if (::mkdir(dir.c_str(), 0755) != 0) continue;
          const int fd = ::open(at("src/n").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
          if (fd >= 0) ::close(fd);
          if (::renameat2(AT_FDCWD, at("src/n").c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) !=
              0) {
            continue;
          }
          const int seed = ::open(at("src/n/seed").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
          if (seed >= 0) ::close(seed);
        }
        stop = true;
        renamer.join();
        // How often the race is won is not bounded: the unit tests in
        // tests/fuse/names_generation_test.cpp pin each overlap down.
        return landed.load() == 0 ? 0 : 3;
      },
      kAgent);
  EXPECT_EQ(child.join(60), 0);
  stop_daemon();
  RunOptions o;
  o.cwd = d_.root();
  EXPECT_EQ(run_sh("ls docs/*/probe 2>/dev/null | wc -l", o).output, "0\n");
}

}  // namespace
}  // namespace leasefs::test::pathcache

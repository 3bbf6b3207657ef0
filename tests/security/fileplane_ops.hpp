// The mutating operations the file-plane tables attempt on a path (as the agent,
// through the mount), and the agent-owned tree each row starts from. Shared by
// the glob-scope table and the protected-paths table.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "tests/security/fileplane_support.hpp"

namespace leasefs::test::fileplane {

using PathOp = std::function<int(const std::string&)>;
using PairOp = std::function<int(const std::string&, const std::string&)>;
using PathOps = std::vector<std::pair<const char*, PathOp>>;

// On an existing file.
inline const PathOps kFileOps = {
    {"open_write",
     [](const std::string& p) {
       int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
       if (fd < 0) return errno;
       int rc = err_of(::write(fd, "w", 1));
       ::close(fd);
       return rc;
     }},
    {"truncate", [](const std::string& p) { return err_of(::truncate(p.c_str(), 1)); }},
    {"chmod", [](const std::string& p) { return err_of(::chmod(p.c_str(), 0600)); }},
    {"utimens",
     [](const std::string& p) {
       struct timespec ts[2] = {{1000, 0}, {1000, 0}};
       return err_of(::utimensat(AT_FDCWD, p.c_str(), ts, 0));
     }},
    {"setxattr",
     [](const std::string& p) { return err_of(::setxattr(p.c_str(), "user.n", "1", 1, 0)); }},
    {"removexattr",
     [](const std::string& p) { return err_of(::removexattr(p.c_str(), "user.k")); }},
    {"unlink", [](const std::string& p) { return err_of(::unlink(p.c_str())); }},
};

// On a name that does not exist yet.
inline const PathOps kNewOps = {
    {"create",
     [](const std::string& p) {
       int fd = ::open(p.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
       if (fd < 0) return errno;
       ::close(fd);
       return 0;
     }},
    {"mkdir", [](const std::string& p) { return err_of(::mkdir(p.c_str(), 0755)); }},
    {"mknod", [](const std::string& p) { return err_of(::mkfifo(p.c_str(), 0644)); }},
    {"symlink", [](const std::string& p) { return err_of(::symlink("target", p.c_str())); }},
};

// On an empty directory.
inline const PathOps kDirOps = {
    {"rmdir", [](const std::string& p) { return err_of(::rmdir(p.c_str())); }},
    {"chmod_dir", [](const std::string& p) { return err_of(::chmod(p.c_str(), 0700)); }},
};

// From one path to another.
inline const std::vector<std::pair<const char*, PairOp>> kPairOps = {
    {"rename", [](const std::string& a,
                  const std::string& b) { return err_of(::rename(a.c_str(), b.c_str())); }},
    {"link", [](const std::string& a,
                const std::string& b) { return err_of(::link(a.c_str(), b.c_str())); }},
};

// Empties the backing tree (but .longrun) and writes `dirs` and `files` (each
// "data\n" with the xattr user.k) directly, owned by the agent, so that only the
// gate refuses.
inline void reseed_tree(const MountedFs& fs, std::initializer_list<const char*> dirs,
                        std::initializer_list<const char*> files) {
  const std::string b = fs.backing() + "/";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(b, ec)) {
    if (e.path().filename() != ".longrun") std::filesystem::remove_all(e.path(), ec);
  }
  auto own = [](const std::string& p) { (void)!::lchown(p.c_str(), kAgent, 65534); };
  for (const char* d : dirs) {
    ::mkdir((b + d).c_str(), 0755);
    own(b + d);
  }
  for (const char* f : files) {
    const std::string p = b + f;
    int fd = ::open(p.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << p;
    ASSERT_EQ(::write(fd, "data\n", 5), 5);
    ::close(fd);
    ASSERT_EQ(::setxattr(p.c_str(), "user.k", "v", 1, 0), 0) << p;
    own(p);
  }
  own(b);
}

}  // namespace leasefs::test::fileplane

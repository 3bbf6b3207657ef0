// Taking over a dead mount without a gap.
//
// A daemon killed hard leaves its mount in place, answering ENOTCONN: the tree
// underneath stays out of reach, which is what we want. The next daemon must
// not unmount it first (a process re-entering the path in between would reach
// the raw tree). Instead it
//   1. reaches the raw root beneath the dead mount without unmounting anything:
//      a private clone of the mount that holds the root's *parent* directory
//      (open_tree(OPEN_TREE_CLONE), not recursive) has no mounts on it, so the
//      root's name in that clone is the raw directory;
//   2. mounts itself on top of the dead mount (mount(2) on the path, which goes
//      to the top of the stack), and only then serves.
// The dead mount stays stacked beneath the live one, failing closed, until
// `leasefs unmount` clears the path; the kernel cannot detach a mount lying
// under another without detaching the one on top.
#pragma once

#include <string>

#include "base/unique_fd.hpp"

namespace leasefs::fuse {

// True when `path` is the mount point of a leasefs mount whose daemon is gone.
bool dead_leasefs_mount(const std::string& path);

// An O_PATH fd to the directory `path` as it is beneath the mounts stacked on
// it. Fails (empty fd, `*error` set) when `path` is itself the root of another
// file system's mount: that tree is not reachable from its parent.
base::UniqueFd open_beneath_mounts(const std::string& path, std::string* error);

// Mounts a new FUSE connection at `mountpoint` on top of whatever is there
// (mount(2) never looks at the mount it covers) and returns its /dev/fuse fd
// for fuse_session_mount("/dev/fd/N"). Options match what libfuse would pass;
// `flags` are the mount(2) flags (fuse/mount_options.hpp).
base::UniqueFd mount_fuse_on_top(const std::string& mountpoint, const std::string& fsname,
                                 bool allow_other, unsigned long flags, std::string* error);

}  // namespace leasefs::fuse

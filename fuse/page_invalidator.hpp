// Dropping the kernel's cached pages of an inode (fuse_lowlevel_notify_inval_inode),
// for shared mappings that outlive their lease (DESIGN.md, threat model):
//  - after a refused writeback, the refused bytes stay in the kernel's (now clean)
//    page; dropping it makes readers through the mount see the file as it is;
//  - around every publication of a snapshot, each inode open for writing is
//    flushed and dropped, so pages dirtied under one snapshot are judged by it and
//    never carried into a later lease (a later `git add` would read them).
//
// A worker thread sends the asynchronous ones: a FUSE request handler must not
// wait on the kernel's page locks itself (the page it is writing back is one).
// The session pointer is guarded so no notification races the session's end.
#pragma once

#include <fuse_lowlevel.h>

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "base/worker_thread.hpp"

namespace leasefs::fuse {

class PageInvalidator {
 public:
  PageInvalidator() = default;
  PageInvalidator(const PageInvalidator&) = delete;
  PageInvalidator& operator=(const PageInvalidator&) = delete;

  // nullptr detaches (waits for a notification in progress).
  void attach(fuse_session* session);

  // Queues `ino` (asynchronous; from request handlers).
  void later(fuse_ino_t ino);
  // Flushes and drops the pages of each of `inos` now, in the calling thread
  // (which must not be a filesystem worker).
  void now(const std::vector<fuse_ino_t>& inos);
  // Drops the kernel's entry for `name` in `parent` now (calling thread as for now()).
  void entry_now(fuse_ino_t parent, const std::string& name);
  // Drops the kernel's cached attributes of `ino` (no page), from a request
  // handler: the daemon changed them underneath (privilege_bits.hpp). Takes no
  // page lock, so it is sent at once unless now() holds the session, when the
  // whole inode is queued as by later().
  void attributes(fuse_ino_t ino);

 private:
  void run();
  void notify(fuse_ino_t ino);  // with session_mu_ held

  std::mutex session_mu_;
  fuse_session* session_ = nullptr;  // guarded by session_mu_

  std::mutex mu_;
  std::deque<fuse_ino_t> queue_;    // guarded by mu_
  base::WorkerThread worker_{mu_};  // started by the first later(); last: stopped first
};

}  // namespace leasefs::fuse

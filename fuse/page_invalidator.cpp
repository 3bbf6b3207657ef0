#include "fuse/page_invalidator.hpp"

namespace leasefs::fuse {

namespace {
constexpr size_t kMaxQueued = 4096;  // beyond this, a refusal storm drops requests
}

void PageInvalidator::attach(fuse_session* session) {
  std::lock_guard lock(session_mu_);
  session_ = session;
}

void PageInvalidator::notify(fuse_ino_t ino) {
  // off 0, len 0: every cached page of the inode (dirty ones are written back
  // first, through the gate).
  if (session_) fuse_lowlevel_notify_inval_inode(session_, ino, 0, 0);
}

void PageInvalidator::later(fuse_ino_t ino) {
  bool start = false;
  {
    std::lock_guard lock(mu_);
    if (worker_.stopping() || queue_.size() >= kMaxQueued) return;
    queue_.push_back(ino);
    start = !worker_.started();  // a write-back write: no second lock once running
  }
  if (start) worker_.start("page-inval", [this] { run(); });
  worker_.wake();
}

void PageInvalidator::now(const std::vector<fuse_ino_t>& inos) {
  std::lock_guard lock(session_mu_);
  for (fuse_ino_t ino : inos) notify(ino);
}

void PageInvalidator::entry_now(fuse_ino_t parent, const std::string& name) {
  std::lock_guard lock(session_mu_);
  if (session_) fuse_lowlevel_notify_inval_entry(session_, parent, name.c_str(), name.size());
}

void PageInvalidator::attributes(fuse_ino_t ino) {
  std::unique_lock lock(session_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return later(ino);
  // A negative offset: the attributes only.
  if (session_) fuse_lowlevel_notify_inval_inode(session_, ino, -1, 0);
}

void PageInvalidator::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (!worker_.wait(lock, [&] { return !queue_.empty(); })) return;
    fuse_ino_t ino = queue_.front();
    queue_.pop_front();
    lock.unlock();
    {
      std::lock_guard session_lock(session_mu_);
      notify(ino);
    }
    lock.lock();
  }
}

}  // namespace leasefs::fuse

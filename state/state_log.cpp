#include "state/state_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/error.hpp"
#include "base/failpoint.hpp"
#include "base/sha256.hpp"

namespace leasefs::state {

namespace {

constexpr size_t kDigestLen = 64;  // lowercase hex SHA-256

std::string read_whole(int fd, const std::string& shown) {
  std::string content;
  char buf[65536];
  for (off_t at = 0;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_io_error("cannot read " + shown, errno);
    }
    if (n == 0) return content;
    content.append(buf, static_cast<size_t>(n));
    at += n;
  }
}

}  // namespace

StateLog::StateLog(const LongrunDir& dir) : shown_(dir.root() + "/.longrun/" + kFileName) {
  fd_ = ::openat(dir.fd(), kFileName, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) fail("cannot open", errno);
  const off_t end = ::lseek(fd_, 0, SEEK_END);
  if (end < 0) fail("cannot seek in", errno);
  bytes_ = static_cast<uint64_t>(end);
  syncer_.start("state-sync", [this] { sync_loop(); });
}

StateLog::~StateLog() {
  syncer_.stop();
  ::close(fd_);
}

void StateLog::fail(const std::string& what, int err) const {
  throw_io_error(what + " " + shown_, err);
}

std::vector<StateLog::Record> StateLog::read_all() {
  std::lock_guard lock(mu_);
  const std::string text = read_whole(fd_, shown_);
  std::vector<Record> records;
  size_t at = 0;
  size_t line_no = 0;
  while (at < text.size()) {
    ++line_no;
    const size_t nl = text.find('\n', at);
    const bool last = nl == std::string::npos || nl + 1 == text.size();
    std::string why;
    Record r;
    if (nl == std::string::npos) {
      why = "the line has no end";
    } else {
      const std::string_view line(text.data() + at, nl - at);
      const std::string_view payload =
          line.size() > kDigestLen + 1 ? line.substr(kDigestLen + 1) : std::string_view();
      if (payload.empty() || line[kDigestLen] != ' ' ||
          line.substr(0, kDigestLen) != base::sha256_hex(payload)) {
        why = "its checksum does not match";
      } else {
        try {
          const auto j = nlohmann::json::parse(payload);
          r.seq = j.at("seq").get<uint64_t>();
          r.state = j.at("state");
          if (!records.empty() && r.seq <= records.back().seq) why = "its sequence goes back";
        } catch (const std::exception& e) {
          why = e.what();
        }
      }
    }
    if (why.empty()) {
      records.push_back(std::move(r));
      at = nl + 1;
      continue;
    }
    if (!last) {
      throw Error(Errc::kStateCorrupt,
                  shown_ + " is corrupt at line " + std::to_string(line_no) + ": " + why +
                      ". leasefs will not guess the state; restore the .longrun directory from "
                      "a backup, or move state.log aside to start from state.json as it is.");
    }
    // The last record was torn by a crash before any reply was sent for it.
    if (::ftruncate(fd_, static_cast<off_t>(at)) != 0) fail("cannot cut the torn end of", errno);
    if (::fdatasync(fd_) != 0) fail("cannot sync", errno);
    bytes_ = at;
    break;
  }
  return records;
}

void StateLog::append(uint64_t seq, const base::JsonText& state, Sync sync) {
  base::ObjectText record;
  record.set("seq", seq);
  record.set_text("state", state);
  const std::string payload = record.str();
  std::string line = base::sha256_hex(payload);
  line += ' ';
  line += payload;
  line += '\n';
  std::lock_guard lock(mu_);
  if (failed_) fail("an earlier write could not be made durable to", failed_);
  size_t done = 0;
  while (done < line.size()) {
    // A failpoint halfway through: what a crash in the middle of the write leaves.
    if (done == 0 && base::failpoint_armed("state_log.torn_write")) {
      if (::write(fd_, line.data(), line.size() / 2) < 0) break;
      base::failpoint("state_log.torn_write");
    }
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      // Take the partial line back so the next record starts a line of its own.
      if (::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0) failed_ = err;
      fail("cannot write", err);
    }
    done += static_cast<size_t>(n);
  }
  bytes_ += line.size();
  // The syncer waits for a first record past durable_, then gathers until one is
  // urgent: anything else it would wake for only to wait again (a context switch
  // per turn in a loop of turns).
  const bool idle = appended_ <= durable_;
  appended_ = std::max(appended_, seq);
  if (sync == Sync::kNow) {
    urgent_ = std::max(urgent_, seq);
  }
  if (idle || sync == Sync::kNow) syncer_.wake();
}

void StateLog::wait_durable(uint64_t seq) {
  std::unique_lock lock(mu_);
  seq = std::min(seq, appended_);
  if (durable_ < seq && urgent_ < seq) {
    urgent_ = seq;  // someone waits for it after all: no more gathering
    syncer_.wake();
  }
  done_.wait(lock, [&] { return durable_ >= seq || failed_ != 0; });
  if (durable_ < seq) fail("cannot sync", failed_);
}

void StateLog::truncate(uint64_t seq) {
  std::lock_guard lock(mu_);
  // If this is lost in a crash, the records left are all at or before `seq`, which
  // state.json already holds; loading skips them.
  if (::ftruncate(fd_, 0) != 0) fail("cannot empty", errno);
  bytes_ = 0;
  appended_ = std::max(appended_, seq);
  durable_ = std::max(durable_, seq);
  done_.notify_all();
}

uint64_t StateLog::size_bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

void StateLog::sync_loop() {
  using Clock = base::BatchPacing::Clock;
  Clock::time_point previous{};  // long ago: the first sync waits kPacing.gather only
  std::unique_lock lock(mu_);
  for (;;) {
    syncer_.wait(lock, [&] { return appended_ > durable_ && failed_ == 0; });
    if (failed_ != 0 || appended_ <= durable_) return;  // stopping, nothing left to sync
    syncer_.wait_until(lock, kPacing.due(Clock::now(), previous),
                       [&] { return urgent_ > durable_; });
    const uint64_t target = appended_;
    previous = Clock::now();
    lock.unlock();
    // One fdatasync for every record appended so far: the group commit.
    const int rc = base::failpoint_armed("state_log.sync") ? -1 : ::fdatasync(fd_);
    const int err = rc == 0 ? 0 : (errno != 0 ? errno : EIO);
    lock.lock();
    if (rc == 0) {
      durable_ = std::max(durable_, target);
    } else {
      failed_ = err;  // the page cache may have dropped the data: never retry
    }
    done_.notify_all();
  }
}

}  // namespace leasefs::state

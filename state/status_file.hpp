// .longrun/status.md, written off the commands' path: a change publishes the new
// text and returns; one writer thread replaces the file (temp file and rename)
// with the newest text it has. After a write it lets changes gather for
// kGather before the next, unless someone flushes: a lone change is in the file
// at once, and a burst (turns in a loop, a flood of refusals) costs one rename
// per kGather instead of one each, whose journal traffic would otherwise slow
// the state log's appends and syncs on the same file system. status.md is
// derived and never read back by the daemon; what depends on a change being on
// disk goes through the state log instead.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "base/worker_thread.hpp"
#include "state/state_store.hpp"

namespace leasefs::state {

class StatusFile {
 public:
  static constexpr std::chrono::milliseconds kGather{20};

  explicit StatusFile(const StateStore& store);
  // Writes the last text published, then stops.
  ~StatusFile();
  StatusFile(const StatusFile&) = delete;
  StatusFile& operator=(const StatusFile&) = delete;

  // The text of a change, made by `render` on the writer's thread when it
  // writes: a change costs its publisher a copy of what the text shows, and a
  // burst renders once per write. `render` must own what it reads.
  using Render = std::function<std::string()>;
  void publish(Render render);
  // Returns once the last text published before the call is in the file (or its
  // write failed, which is logged).
  void flush();

 private:
  void write_loop();

  const StateStore& store_;
  std::mutex mu_;
  std::condition_variable written_;
  Render render_;  // the newest change's, until the writer takes it
  uint64_t published_ = 0;
  uint64_t done_ = 0;
  int flushers_ = 0;  // callers of flush() waiting: no gathering for them
  std::chrono::steady_clock::time_point next_write_{};
  // Woken by a publish (the idle writer has work) or a flush (the gathering
  // writer stops waiting); last: stopped first.
  base::WorkerThread writer_{mu_};
};

}  // namespace leasefs::state

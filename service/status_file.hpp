// .longrun/status.md, written off the commands' path: a change publishes the new
// text and returns; one writer thread replaces the file (temp file and rename)
// with the newest text it has, so a burst of changes costs one write. status.md is
// derived and never read back by the daemon; what depends on a change being on
// disk goes through the state log instead.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "service/state_store.hpp"

namespace leasefs::service {

class StatusFile {
 public:
  explicit StatusFile(const StateStore& store);
  // Writes the last text published, then stops.
  ~StatusFile();
  StatusFile(const StatusFile&) = delete;
  StatusFile& operator=(const StatusFile&) = delete;

  void publish(std::string text);
  // Returns once the last text published before the call is in the file (or its
  // write failed, which is logged).
  void flush();

 private:
  void write_loop();

  const StateStore& store_;
  std::mutex mu_;
  std::condition_variable work_;
  std::condition_variable written_;
  std::string text_;
  uint64_t published_ = 0;
  uint64_t done_ = 0;
  bool stop_ = false;
  std::thread writer_;
};

}  // namespace leasefs::service

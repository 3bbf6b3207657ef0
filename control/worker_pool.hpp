// The workers that run control commands: a small fixed pool, because commands
// are serialized by the Service anyway (memory.search and status can still
// overlap with a write command waiting on its fsync). Workers run commands and
// nothing else: they never touch a socket, so no peer can hold one.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace leasefs::control {

class WorkerPool {
 public:
  using Task = std::function<void()>;

  ~WorkerPool() { stop(); }

  void start(size_t workers);
  // An urgent task (an approver's) goes to the front of the queue: however many
  // requests the agent queues, a turn, revoke, grant or approve waits for one
  // command at most.
  void submit(Task task, bool urgent);
  // Drops the tasks not begun and waits for the running ones; idempotent.
  void stop();

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace leasefs::control

#include "control/worker_pool.hpp"

#include "base/thread_name.hpp"

namespace leasefs::control {

void WorkerPool::start(size_t workers) {
  size_t n = workers == 0 ? 1 : workers;
  for (size_t i = 0; i < n; ++i) {
    threads_.emplace_back([this] {
      base::name_this_thread("control-work");
      run();
    });
  }
}

void WorkerPool::submit(Task task, bool urgent) {
  {
    std::lock_guard lock(mu_);
    if (urgent) {
      tasks_.push_front(std::move(task));
    } else {
      tasks_.push_back(std::move(task));
    }
  }
  cv_.notify_one();
}

void WorkerPool::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    tasks_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void WorkerPool::run() {
  while (true) {
    Task task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (stopping_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace leasefs::control

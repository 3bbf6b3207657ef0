// Control socket latency and throughput against a real Runtime over a temporary
// root (state writes and the audit log fsync as in production).
//
//   control_bench [N] [ONLY]   N requests per latency series (default 10000);
//                              ONLY: run just that series (status, turn, grant,
//                              fsync)
//
// Prints p50/p99/max of `status`, `turn` and `grant` (one connection,
// sequential) and of one append+fdatasync beside them (`fsync`, the disk's
// floor under a durable reply), then requests/s of `status` and of `turn` with
// 8 concurrent clients.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/heap_tuning.hpp"
#include "base/unique_fd.hpp"
#include "daemon/runtime.hpp"
#include "protocol/client.hpp"

using Clock = std::chrono::steady_clock;

namespace {

double us(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

void report(const char* name, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))]; };
  std::printf("%-8s n=%zu  p50=%.0f us  p99=%.0f us  max=%.0f us\n", name, v.size(), at(0.50),
              at(0.99), v.back());
}

void expect_ok(const nlohmann::json& reply) {
  if (!reply.value("ok", false)) {
    std::fprintf(stderr, "unexpected reply: %s\n", reply.dump().c_str());
    std::exit(1);
  }
}

double throughput(const std::string& socket, const char* cmd, int clients, double seconds) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> done{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&] {
      leasefs::protocol::Client c = leasefs::protocol::Client::connect(socket);
      uint64_t n = 0;
      while (!stop) {
        expect_ok(c.call(cmd));
        ++n;
      }
      done += n;
    });
  }
  auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  return static_cast<double>(done) / std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  leasefs::base::keep_freed_heap();  // as `leasefs mount` does
  int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  const std::string only = argc > 2 ? argv[2] : "";
  auto runs = [&only](const char* series) { return only.empty() || only == series; };
  spdlog::set_level(spdlog::level::warn);
  char tmpl[] = "/tmp/leasefs-bench-XXXXXX";
  std::string tmp = ::mkdtemp(tmpl);
  std::string root = tmp + "/root";
  std::filesystem::create_directories(root);
  leasefs::base::UniqueFd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  leasefs::daemon::RuntimeOptions options;
  options.socket_path = tmp + "/ctl.sock";
  {
    leasefs::daemon::Runtime runtime(root_fd.get(), root, options);
    runtime.start_control();
    leasefs::protocol::Client c = leasefs::protocol::Client::connect(options.socket_path);
    expect_ok(c.call("start", {{"description", "benchmark the control socket"}}));

    std::vector<double> status;
    status.reserve(n);
    for (int i = 0; i < n && runs("status"); ++i) {
      auto t0 = Clock::now();
      expect_ok(c.call("status"));
      status.push_back(us(Clock::now() - t0));
    }
    if (runs("status")) report("status", status);

    std::vector<double> turn;
    turn.reserve(n);
    for (int i = 0; i < n && runs("turn"); ++i) {
      auto t0 = Clock::now();
      expect_ok(c.call("turn"));
      turn.push_back(us(Clock::now() - t0));
    }
    if (runs("turn")) report("turn", turn);

    std::vector<double> grant;
    grant.reserve(n);
    for (int i = 0; i < n && runs("grant"); ++i) {
      if (i % 50 == 0) expect_ok(c.call("revoke"));  // keep the lease (and state) small
      auto t0 = Clock::now();
      expect_ok(c.call("grant", {{"reason", "bench"}, {"paths", {"src/*"}}, {"ttl", "10m"}}));
      grant.push_back(us(Clock::now() - t0));
    }
    if (runs("grant")) report("grant", grant);

    // The floor under every durable reply: one small append and fdatasync on the
    // same file system, as the state log makes (a grant waits for the ledger's instead).
    std::vector<double> sync;
    sync.reserve(n);
    if (runs("fsync")) {
      leasefs::base::UniqueFd f(
          ::open((tmp + "/probe").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
      const std::string record(300, 'x');
      for (int i = 0; i < n; ++i) {
        auto t0 = Clock::now();
        if (::write(f.get(), record.data(), record.size()) < 0 || ::fdatasync(f.get()) != 0) {
          std::perror("probe");
          return 1;
        }
        sync.push_back(us(Clock::now() - t0));
      }
      report("fsync", sync);
    }

    if (only.empty()) {
      // The usual state for the throughput runs: one grant in force (the grant
      // series above leaves up to 50, and every status reply would carry them).
      expect_ok(c.call("revoke"));
      expect_ok(c.call("grant", {{"reason", "bench"}, {"paths", {"src/*"}}}));
      std::printf("status   8 clients: %.0f requests/s\n",
                  throughput(options.socket_path, "status", 8, 3.0));
      std::printf("turn     8 clients: %.0f requests/s\n",
                  throughput(options.socket_path, "turn", 8, 3.0));
    }
    runtime.stop();
  }
  std::filesystem::remove_all(tmp);
  return 0;
}

// The fleet's ledger under load: N simulated bridges (threads, one PostgreSQL
// session each, as their own machine roles), each filing requests at a rate and
// waiting on its NOTIFY channel as the real bridge does, while approvers (a
// person's role) decide every request as it comes. It measures what a person
// waits for: from a decision's insert (its decided_at) to the moment its
// machine's bridge has read it (the real bridge then approves on the local
// socket, which takes well under a millisecond: bench/control_bench). And what
// the server spends: the CPU of the postmaster and its backends over the run.
//
//   fleet_load --admin CONNINFO --postgres-pid PID [--bridges 1000]
//              [--rate 1.0] [--seconds 300] [--approvers 4]
// bench/fleet_load.sh starts the cluster and runs it. --rate is requests per
// second per bridge: 1.0 is 60 times an agent that asks once a minute.
#include <dirent.h>
#include <poll.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fleet/migrations.hpp"
#include "fleet/pg_connection.hpp"

namespace {

using leasefs::fleet::PgConnection;
using leasefs::fleet::PgError;
using Clock = std::chrono::steady_clock;

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string conninfo_as(const std::string& admin, const std::string& user,
                        const std::string& password) {
  // The admin's string with its user and password replaced (libpq takes the last of a key).
  return admin + " user=" + user + " password=" + password;
}

// CPU seconds (user + system) of `pid` and every process whose parent it is.
double cpu_seconds_of_tree(pid_t pid) {
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  double total = 0;
  DIR* proc = ::opendir("/proc");
  if (!proc) return 0;
  while (dirent* e = ::readdir(proc)) {
    const pid_t p = static_cast<pid_t>(std::atol(e->d_name));
    if (p <= 0) continue;
    std::ifstream in("/proc/" + std::to_string(p) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 2));
    std::string f[13];
    for (auto& x : f)
      fields >>
          x;  // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    const pid_t ppid = static_cast<pid_t>(std::atol(f[1].c_str()));
    if (p != pid && ppid != pid) continue;
    total += (std::atof(f[11].c_str()) + std::atof(f[12].c_str())) / tick;
  }
  ::closedir(proc);
  return total;
}

struct Options {
  std::string admin;
  pid_t postgres_pid = 0;
  int bridges = 1000;
  double rate = 1.0;
  int seconds = 300;
  int approvers = 4;
};

struct Totals {
  std::mutex mu;
  std::vector<int64_t> latencies_ms;  // decision insert to its bridge's read
  uint64_t filed = 0, seen = 0, errors = 0;
  std::string first_error;
  void error(const std::string& what) {
    std::lock_guard lock(mu);
    if (errors++ == 0) first_error = what;
  }
};

// One simulated bridge: files requests at `rate`, and on each NOTIFY reads its
// machine's decisions that have no outcome yet, as fleet/bridge.cpp does, and
// records an outcome for each.
void run_bridge(const Options& o, const std::string& conninfo, const std::string& project,
                Clock::time_point start, Clock::time_point stop_filing, Clock::time_point end,
                unsigned seed, Totals& totals, std::atomic<int>& connected) {
  std::vector<int64_t> latencies;
  uint64_t filed = 0;
  try {
    PgConnection db = PgConnection::open(conninfo, std::chrono::seconds(60));
    db.exec("SELECT fleet.listen_for_decisions()");
    connected.fetch_add(1);
    std::mt19937 rng(seed);
    std::exponential_distribution<double> gap(o.rate);
    auto next = start + std::chrono::microseconds(static_cast<int64_t>(gap(rng) * 1e6));
    while (Clock::now() < end) {
      if (Clock::now() >= next && next < stop_filing) {
        db.exec(
            "INSERT INTO fleet.requests (project_id, local_id, task_id, turn, paths, ops, reason,"
            " created_ms, digest) VALUES ($1, $2, 'T_load', 1, '[\"src/**\"]', '[]', 'load',"
            " $3, repeat('a', 64))",
            {project, "R_" + std::to_string(++filed), std::to_string(wall_ms())});
        next += std::chrono::microseconds(static_cast<int64_t>(gap(rng) * 1e6));
      }
      const auto wait =
          std::clamp<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                  (next < stop_filing ? std::min(next, end) : end) - Clock::now())
                                  .count(),
                              0, 1000);
      pollfd p{db.socket(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(wait)) <= 0 || !db.take_notifications()) continue;
      auto due = db.exec(
          "SELECT d.id, (extract(epoch from d.decided_at) * 1000)::bigint FROM fleet.decisions d"
          " JOIN fleet.requests r ON r.id = d.request_id WHERE r.project_id = $1 AND NOT EXISTS"
          " (SELECT 1 FROM fleet.decision_outcomes x WHERE x.decision_id = d.id) ORDER BY d.id",
          {project});
      const int64_t now = wall_ms();
      for (int i = 0; i < due.rows(); ++i) {
        latencies.push_back(now - due.integer(i, 1));
        db.exec("INSERT INTO fleet.decision_outcomes (decision_id, outcome) VALUES ($1, 'applied')",
                {due.text(i, 0)});
      }
    }
  } catch (const std::exception& e) {
    totals.error(e.what());
  }
  std::lock_guard lock(totals.mu);
  totals.filed += filed;
  totals.seen += latencies.size();
  totals.latencies_ms.insert(totals.latencies_ms.end(), latencies.begin(), latencies.end());
}

// One approver's session: decides each new request whose id falls in its share.
void run_approver(const std::string& conninfo, int index, int of, Clock::time_point end,
                  Totals& totals, std::atomic<uint64_t>& decided) {
  try {
    PgConnection db = PgConnection::open(conninfo, std::chrono::seconds(60));
    // Ids are taken at insert and committed in another order: the scan starts
    // a window below the last id seen, and skips what is decided.
    int64_t last = 0;
    while (Clock::now() < end) {
      auto fresh = db.exec(
          "SELECT r.id, r.digest FROM fleet.requests r WHERE r.id > $1 AND r.id % $2 = $3 AND NOT "
          "EXISTS (SELECT 1 FROM fleet.decisions d WHERE d.request_id = r.id) ORDER BY r.id LIMIT "
          "500",
          {std::to_string(std::max<int64_t>(0, last - 5000)), std::to_string(of),
           std::to_string(index)});
      if (fresh.rows() == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      for (int i = 0; i < fresh.rows(); ++i) {
        db.exec(
            "INSERT INTO fleet.decisions (request_id, decision, digest) VALUES ($1, 'approve', $2)",
            {fresh.text(i, 0), fresh.text(i, 1)});
        decided.fetch_add(1);
      }
      last = std::max<int64_t>(last, fresh.integer(fresh.rows() - 1, 0));
    }
  } catch (const std::exception& e) {
    totals.error(e.what());
  }
}

int64_t percentile(std::vector<int64_t>& v, double p) {
  if (v.empty()) return -1;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app("the fleet's ledger under load: simulated bridges, approvers, one PostgreSQL");
  app.add_option("--admin", o.admin, "the administrator's libpq connection string")->required();
  app.add_option("--postgres-pid", o.postgres_pid, "the postmaster, for the server's CPU")
      ->required();
  app.add_option("--bridges", o.bridges, "simulated bridges (machines)");
  app.add_option("--rate", o.rate, "requests per second per bridge");
  app.add_option("--seconds", o.seconds, "how long requests are filed");
  app.add_option("--approvers", o.approvers, "sessions deciding, as one person");
  CLI11_PARSE(app, argc, argv);

  const std::string password = "load" + std::to_string(::getpid());
  std::vector<std::string> projects;
  {
    PgConnection admin = PgConnection::open(o.admin);
    leasefs::fleet::migrate(admin,
                            leasefs::fleet::parse_migrations(leasefs::fleet::ledger_schema_text()));
    admin.exec("SELECT fleet.enroll_person('approver', $1)", {password});
    std::printf("enrolling %d machines\n", o.bridges);
    std::fflush(stdout);
    for (int i = 0; i < o.bridges; ++i) {
      const std::string m = "m" + std::to_string(i);
      admin.exec("SELECT fleet.enroll_machine($1, $2)", {m, password});
      projects.push_back(
          admin.exec("SELECT fleet.delegate('approver', $1, '/srv/load')", {m}).text(0, 0));
    }
  }

  Totals totals;
  std::atomic<int> connected{0};
  std::atomic<uint64_t> decided{0};
  // Requests are filed from `start` (once every session is up) for o.seconds;
  // approvers and bridges then go on until `drained`, for the last decisions.
  const auto connect_budget = std::chrono::seconds(60 + o.bridges / 20);
  const auto start = Clock::now() + connect_budget;
  const auto stop_filing = start + std::chrono::seconds(o.seconds);
  const auto drained = stop_filing + std::chrono::seconds(10);  // the last decisions, read
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(o.bridges + o.approvers));
  for (int i = 0; i < o.bridges; ++i) {
    threads.emplace_back([&, i] {
      run_bridge(o, conninfo_as(o.admin, "m" + std::to_string(i), password),
                 projects[static_cast<size_t>(i)], start, stop_filing, drained,
                 static_cast<unsigned>(i) * 7919u + 1u, totals, connected);
    });
  }
  while (connected.load() < o.bridges && Clock::now() < start) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf("%d of %d bridges connected and listening; filing for %d s\n", connected.load(),
              o.bridges, o.seconds);
  std::fflush(stdout);
  std::this_thread::sleep_until(start);
  const double cpu_before = cpu_seconds_of_tree(o.postgres_pid);
  for (int i = 0; i < o.approvers; ++i) {
    threads.emplace_back([&, i] {
      run_approver(conninfo_as(o.admin, "approver", password), i, o.approvers, drained, totals,
                   decided);
    });
  }
  std::this_thread::sleep_until(stop_filing);
  const double cpu_after = cpu_seconds_of_tree(o.postgres_pid);
  for (auto& t : threads) t.join();

  std::vector<int64_t>& l = totals.latencies_ms;
  const uint64_t seen = l.size();
  const int64_t p50 = percentile(l, 0.50), p90 = percentile(l, 0.90), p99 = percentile(l, 0.99),
                max = l.empty() ? -1 : *std::max_element(l.begin(), l.end());
  std::printf("bridges %d, rate %.2f/s each, %d s, %d approver sessions\n", o.bridges, o.rate,
              o.seconds, o.approvers);
  std::printf(
      "requests filed %llu (%.0f/s), decided %llu, read by their bridges %llu\n",
      static_cast<unsigned long long>(totals.filed), static_cast<double>(totals.filed) / o.seconds,
      static_cast<unsigned long long>(decided.load()), static_cast<unsigned long long>(seen));
  std::printf(
      "decision insert -> read by its bridge: p50 %lld ms, p90 %lld ms, p99 %lld ms, max %lld ms\n",
      static_cast<long long>(p50), static_cast<long long>(p90), static_cast<long long>(p99),
      static_cast<long long>(max));
  std::printf("PostgreSQL CPU while filing: %.1f s over %d s = %.2f cores (this host has %ld)\n",
              cpu_after - cpu_before, o.seconds, (cpu_after - cpu_before) / o.seconds,
              ::sysconf(_SC_NPROCESSORS_ONLN));
  if (totals.errors) {
    std::printf("errors: %llu, the first: %s\n", static_cast<unsigned long long>(totals.errors),
                totals.first_error.c_str());
  }
  return totals.errors ? 1 : 0;
}

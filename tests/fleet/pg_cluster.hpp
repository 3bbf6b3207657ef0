// A throwaway PostgreSQL 15 cluster for one test: initdb as the unprivileged
// `postgres` user in a fresh temporary directory, listening on a Unix socket in
// that directory only (listen_addresses=''), started with `pg_ctl start -w`.
// It is always stopped (`pg_ctl stop -m immediate`) and removed: by the
// destructor, and, should the test process die first (a crash, ctest's timeout),
// by a reaper process that sees the test's end of a pipe close and then stops
// the postmaster and removes the directory itself.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fleet/migrations.hpp"
#include "fleet/pg_connection.hpp"
#include "tests/support/run.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::test {

inline constexpr const char* kPgBin = "/usr/lib/postgresql/15/bin/";

// A password made of hex digits: nothing in it needs quoting in a conninfo.
inline std::string random_password() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 32; ++i) out.push_back("0123456789abcdef"[rd() % 16]);
  return out;
}

class PgCluster {
 public:
  PgCluster() : base_(make_temp_dir("leasefs-pg-")) {
    const passwd* pw = ::getpwnam("postgres");
    if (!pw) throw std::runtime_error("no `postgres` user: run scripts/install-deps");
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
    start_reaper();
    ::chmod(base_.c_str(), 0755);
    data_ = base_ + "/data";
    sock_ = base_ + "/sock";
    log_ = base_ + "/log";
    ::mkdir(data_.c_str(), 0700);
    ::mkdir(log_.c_str(), 0700);
    ::mkdir(sock_.c_str(), 0755);
    admin_password_ = random_password();
    const std::string pwfile = base_ + "/pwfile";
    { std::ofstream(pwfile) << admin_password_ << "\n"; }
    for (const std::string& p : {data_, sock_, log_, pwfile}) {
      if (::chown(p.c_str(), uid_, gid_) != 0) throw std::runtime_error("chown " + p);
    }
    ::chmod(pwfile.c_str(), 0600);
    RunResult init = as_postgres(
        {std::string(kPgBin) + "initdb", "-D", data_, "-U", "fleet_admin", "--pwfile=" + pwfile,
         "--auth=scram-sha-256", "-E", "UTF8", "--no-instructions", "--no-sync"},
        120);
    ::unlink(pwfile.c_str());
    if (!init.ok()) throw std::runtime_error("initdb failed: " + init.output);
    start();
    admin("postgres").exec("CREATE DATABASE fleet");
  }
  ~PgCluster() {
    stop();
    ::unlink((data_ + "/postmaster.pid").c_str());  // the reaper must not signal a reused pid
    ::close(reaper_pipe_);                          // the reaper finds nothing left to do and exits
    ::waitpid(reaper_, nullptr, 0);
    remove_tree(base_);
  }
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  void start() {
    RunResult r = as_postgres({std::string(kPgBin) + "pg_ctl", "-D", data_, "-l",
                               log_ + "/server.log", "-w", "-t", "60", "-o",
                               "-c listen_addresses='' -c unix_socket_directories=" + sock_ +
                                   " -c fsync=off -c full_page_writes=off",
                               "start"},
                              90);
    if (!r.ok()) throw std::runtime_error("pg_ctl start failed: " + r.output + log_tail());
  }
  void stop() {
    const pid_t master = postmaster_pid();
    signal_all(SIGCONT);  // a stopped server neither shuts down nor dies of SIGKILL's children
    as_postgres(
        {std::string(kPgBin) + "pg_ctl", "-D", data_, "-m", "immediate", "-w", "-t", "30", "stop"},
        40);
    // pg_ctl returns once the pid file is gone, a moment before the process is.
    for (int i = 0; master > 0 && running(master) && i < 1000; ++i) ::usleep(10000);
    if (master > 0 && running(master)) ::kill(master, SIGKILL);
  }

  // The postmaster and every backend it forked: a stopped server is all of them.
  void signal_all(int sig) {
    pid_t master = postmaster_pid();
    if (master <= 0) return;
    std::vector<pid_t> pids{master};
    RunResult kids = run_argv({"pgrep", "-P", std::to_string(master)});
    for (size_t pos = 0; pos < kids.output.size();) {
      size_t nl = kids.output.find('\n', pos);
      if (nl == std::string::npos) nl = kids.output.size();
      const std::string word = kids.output.substr(pos, nl - pos);
      if (!word.empty()) pids.push_back(static_cast<pid_t>(std::stol(word)));
      pos = nl + 1;
    }
    for (pid_t p : pids) ::kill(p, sig);
  }

  // Alive and not a zombie (whoever reaps orphans here may take its time).
  static bool running(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
  }

  pid_t postmaster_pid() const {
    std::ifstream in(data_ + "/postmaster.pid");
    pid_t pid = 0;
    in >> pid;
    return pid;
  }

  // A libpq connection string for `user` with `password` on database `db`.
  std::string conninfo(const std::string& user, const std::string& password,
                       const std::string& db = "fleet") const {
    return "host=" + sock_ + " dbname=" + db + " user=" + user + " password=" + password;
  }
  std::string admin_conninfo(const std::string& db = "fleet") const {
    return conninfo("fleet_admin", admin_password_, db);
  }
  fleet::PgConnection admin(const std::string& db = "fleet") const {
    return fleet::PgConnection::open(admin_conninfo(db));
  }
  // The ledger's schema, applied as the administrator.
  void load_schema() {
    fleet::PgConnection db = admin();
    fleet::migrate(db, fleet::parse_migrations(fleet::ledger_schema_text()));
  }

  const std::string& socket_dir() const { return sock_; }
  const std::string& base() const { return base_; }

 private:
  RunResult as_postgres(const std::vector<std::string>& argv, int timeout_s) {
    RunOptions o;
    o.uid = uid_;
    o.gid = gid_;
    o.cwd = base_;
    o.timeout_s = timeout_s;
    return run_argv(argv, o);
  }
  std::string log_tail() const {
    std::ifstream in(log_ + "/server.log");
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return "\nserver log: " + all.substr(all.size() > 2000 ? all.size() - 2000 : 0);
  }
  // A child that waits for EOF on a pipe only this process holds open, then stops
  // whatever postmaster the data directory names and removes the directory.
  void start_reaper() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    const std::string script =
        "cat >/dev/null; pid=$(head -n1 '" + base_ +
        "/data/postmaster.pid' 2>/dev/null); "
        "if [ -n \"$pid\" ]; then kill -QUIT \"$pid\" 2>/dev/null; i=0; "
        "while kill -0 \"$pid\" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; "
        "kill -KILL \"$pid\" 2>/dev/null; fi; rm -rf '" +
        base_ + "'";
    reaper_ = ::fork();
    if (reaper_ == 0) {
      ::dup2(fds[0], 0);
      ::setsid();  // outlives the test's process group being killed
      ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[0]);
    reaper_pipe_ = fds[1];
  }

  std::string base_, data_, sock_, log_, admin_password_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  pid_t reaper_ = -1;
  int reaper_pipe_ = -1;
};

}  // namespace leasefs::test

// The fleet on one machine, all real: a PostgreSQL cluster with the ledger, a
// leasefs daemon over a root with the agent as its own uid, and the bridge as a
// third uid (named an approver with --approver-uid), started and killed by the
// test. Machine `machine_a` and person `alice` are enrolled, the root delegated.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/fleet/ledger_site.hpp"
#include "tests/support/agentuser_daemons.hpp"

namespace leasefs::test {

class FleetBridgeTest : public AgentUserTest {
 protected:
  void SetUp() override {
    std::tie(agent_uid, agent_gid) = add_user("lffagent");
    std::tie(bridge_uid, bridge_gid) = add_user("lffbridge");
    root = base + "/root";
    sock = base + "/ctl.sock";
    ::mkdir(root.c_str(), 0755);
    ::mkdir((root + "/src").c_str(), 0755);
    std::ofstream(root + "/src/a.txt") << "timeout = 10\n";
    ASSERT_EQ(
        run_argv({"chown", "-R", std::to_string(agent_uid) + ":" + std::to_string(agent_gid), root})
            .exit_code,
        0);
    std::vector<std::string> mount = {
        "mount",    root, "--agent",        users[0],
        "--socket", sock, "--approver-uid", std::to_string(bridge_uid)};
    mount.insert(mount.end(), mount_options.begin(), mount_options.end());
    RunResult r = leasefs(mount, root, root);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(leasectl({"start", "fleet task"}).exit_code, 0);

    machine_conninfo = ledger.enroll_machine("machine_a");
    ledger.enroll_person("alice");
    project = ledger.delegate("alice", "machine_a", root);
    credentials = base + "/bridge.conninfo";
    write_credentials(credentials, machine_conninfo, bridge_uid, 0600);
  }
  void TearDown() override {
    stop_bridge();
    AgentUserTest::TearDown();
  }

  static void write_credentials(const std::string& path, const std::string& text, uid_t owner,
                                mode_t mode) {
    std::ofstream(path, std::ios::trunc) << text << "\n";
    ASSERT_EQ(::chown(path.c_str(), owner, static_cast<gid_t>(-1)), 0);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
  }

  // `leasectl --socket SOCK ARGS...` as root (a local approver).
  RunResult leasectl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {LEASECTL_PATH, "--socket", sock};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_argv(argv, RunOptions{.cwd = base, .timeout_s = 30});
  }
  nlohmann::json status() {
    RunResult r = leasectl({"--json", "status"});
    nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
    return j.is_object() ? j.value("result", nlohmann::json::object()) : nlohmann::json::object();
  }
  // What the daemon says of the centre, as a bridge last reported it ("" if none did).
  std::string centre() {
    return status().value("fleet", nlohmann::json::object()).value("centre", std::string());
  }
  // The agent asks, as the agent's own uid, from inside the tree.
  RunResult agent(const std::string& script) {
    return as_user(agent_uid, agent_gid, script, root + "/src");
  }
  RunResult agent_request(const std::string& reason) {
    return agent(q(LEASECTL_PATH) + " --socket " + q(sock) + " request --reason " + q(reason) +
                 " --path 'src/**'");
  }

  // The bridge as its own uid, in the background; `failpoint` makes it die there.
  pid_t start_bridge(const std::string& failpoint = "", const std::string& creds = "") {
    const std::string log = base + "/bridge.log";
    const std::string cred = creds.empty() ? credentials : creds;
    const std::string target = root + "=" + sock;
    // Everything the child needs is made before fork: after it, only exec.
    const std::string armed = "LEASEFS_FAILPOINT=" + failpoint;
    const char* env[] = {"PATH=/usr/bin:/bin", failpoint.empty() ? nullptr : armed.c_str(),
                         nullptr};
    const char* argv[] = {"leasefs-bridge", "run",      "--credentials",
                          cred.c_str(),     "--daemon", target.c_str(),
                          "--repoll",       "30",       nullptr};
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::setpgid(0, 0);
      if (::setgroups(0, nullptr) != 0 || ::setgid(bridge_gid) != 0 || ::setuid(bridge_uid) != 0) {
        ::_exit(127);
      }
      ::execve(BRIDGE_BIN, const_cast<char**>(argv), const_cast<char**>(env));
      ::_exit(127);
    }
    ::close(fd);
    pids.push_back(pid);
    bridge = pid;
    return pid;
  }
  // Waits (bounded) for the bridge to exit; its exit code, or -1.
  int wait_bridge_exit(int seconds = 60) {
    int status = 0;
    for (int i = 0; i < seconds * 100; ++i) {
      if (::waitpid(bridge, &status, WNOHANG) == bridge) {
        bridge = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      ::usleep(10000);
    }
    return -1;
  }
  void stop_bridge() {
    if (bridge <= 0) return;
    ::kill(bridge, SIGKILL);
    ::waitpid(bridge, nullptr, 0);
    bridge = -1;
  }
  std::string bridge_log() { return read_text(base + "/bridge.log"); }

  // One value from the ledger, read as its administrator.
  std::string ledger_value(const std::string& sql, const std::vector<fleet::PgParam>& params = {}) {
    fleet::PgResult r = ledger.pg.admin().exec(sql, params);
    return r.rows() > 0 ? r.text(0, 0) : "";
  }
  // Waits (bounded) until `sql` answers `want`.
  bool ledger_says(const std::string& sql, const std::string& want, int seconds = 60) {
    return wait_until([&] { return ledger_value(sql) == want; }, seconds);
  }
  // The ledger's id and digest of the request with local id `local`.
  std::pair<std::string, std::string> filed(const std::string& local) {
    fleet::PgResult r = ledger.pg.admin().exec(
        "SELECT id, digest FROM fleet.requests WHERE local_id = $1", {local});
    return r.rows() ? std::pair{r.text(0, 0), r.text(0, 1)} : std::pair<std::string, std::string>{};
  }
  // alice decides, as herself.
  std::string decide(const std::string& request_id, const std::string& decision,
                     const std::string& digest) {
    return ledger.as("alice")
        .exec(
            "INSERT INTO fleet.decisions (request_id, decision, digest, reason) VALUES ($1, $2,"
            " $3, 'looks right') RETURNING id",
            {request_id, decision, digest})
        .text(0, 0);
  }
  // Waits (bounded) until the local audit holds `n` events of `type` (the audit
  // writer batches: an event is in the file a moment after its reply).
  std::vector<nlohmann::json> audit_events_when(const std::string& type, size_t n) {
    std::vector<nlohmann::json> events;
    wait_until([&] { return (events = audit_events(type)).size() >= n; }, 30);
    return events;
  }
  // The local audit's events of `type`, as the approver reads them.
  std::vector<nlohmann::json> audit_events(const std::string& type) {
    RunResult r = leasectl({"--json", "audit", "show"});
    std::vector<nlohmann::json> out;
    nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
    if (!j.is_object()) return out;
    for (const auto& e : j["result"].value("records", nlohmann::json::array())) {
      if (e.value("type", std::string()) == type) out.push_back(e);
    }
    return out;
  }
  // The daemon's audit log, line by line (read as root, through the mount).
  std::vector<std::string> audit_lines() {
    std::vector<std::string> lines;
    std::ifstream in(root + "/.longrun/audit.jsonl");
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  // Waits (bounded) until the ledger holds every record of the log, then checks
  // that it holds them as they are: seq 1..N, each the file's exact line.
  bool audit_shipped() {
    std::vector<std::string> local;
    const bool caught_up = wait_until(
        [&] {
          local = audit_lines();
          return ledger_value("SELECT count(*) FROM fleet.audit_records") ==
                 std::to_string(local.size());
        },
        60);
    if (!caught_up) return false;
    fleet::PgResult rows =
        ledger.pg.admin().exec("SELECT seq, line FROM fleet.audit_records ORDER BY seq");
    for (int i = 0; i < rows.rows(); ++i) {
      if (rows.text(i, 0) != std::to_string(i + 1)) return false;
      if (rows.text(i, 1) != local[static_cast<size_t>(i)]) return false;
    }
    return true;
  }
  bool agent_can_write() { return agent("printf 'timeout = 30\\n' > a.txt").exit_code == 0; }

  std::vector<std::string> mount_options;  // more of `leasefs mount`'s, set before SetUp
  LedgerSite ledger;
  uid_t agent_uid = 0, bridge_uid = 0;
  gid_t agent_gid = 0, bridge_gid = 0;
  std::string root, sock, credentials, machine_conninfo, project;
  pid_t bridge = -1;
};

}  // namespace leasefs::test

// The bridge: one per machine, running as its own uid, listening on nothing.
// It carries the machine's daemons' requests and audit records to the ledger
// and the ledger's decisions back, through the daemons' control sockets:
//
//   1. For each daemon: insert each pending request of its turn (task, turn,
//      paths, ops, reason, who asked, the digest of its canonical JSON); ship
//      every audit record after the last seq the ledger holds, in order, each
//      batch in one transaction (the ledger takes a record only as the next of
//      its chain, so a restart resumes with no gap and no duplicate); then ship
//      every signed head after the greatest size the ledger holds, in order, a
//      head only once the ledger holds the chain up to its size (its primary
//      key (project, size) keeps a restart from shipping one twice).
//   2. For each decision of this machine with no outcome yet: check on the
//      daemon that the request is still pending in the same task and turn with
//      the digest the person decided on, then approve or reject with the central
//      decision id as the idempotency key; record the outcome (applied, or
//      stale with why). A decision read, applied and not yet recorded when the
//      bridge dies is applied again under the same key on restart: the daemon
//      answers with its first reply, so there is one grant, once.
//   3. Send the machine's policy rows in force (its own and the all-machines
//      ones, for this project's scope) as policy.apply when their digest is not
//      the version the daemon holds; the daemon merges them so nothing loosens.
//   4. Wait for a NOTIFY on the machine's channel, a daemon's event (watch), or
//      the re-poll period (30 s), then start again.
//
// The centre down: every daemon is told (fleet.report) and keeps deciding
// locally; the bridge reconnects and carries on. It never grants anything itself.
#pragma once

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fleet/pg_connection.hpp"
#include "protocol/client.hpp"

namespace leasefs::fleet {

// A configuration the bridge cannot work with (not an enrolled machine...).
class BridgeRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DaemonLink {
  std::string root;    // the project: the daemon's root
  std::string socket;  // its control socket
};

struct BridgeOptions {
  std::string conninfo;  // the machine role's, from its credentials file
  std::vector<DaemonLink> daemons;
  std::chrono::milliseconds repoll{30000};
  std::chrono::milliseconds reconnect{2000};
};

class Bridge {
 public:
  explicit Bridge(BridgeOptions options);

  // Until `stop` is set. Throws BridgeRefused for a role the ledger does not
  // know as a machine.
  void run(const std::atomic<bool>& stop);

 private:
  struct Daemon {
    DaemonLink link;
    std::optional<protocol::Client> control;
    std::optional<protocol::Client> watch;
    std::string project_id;      // in the ledger, once known
    std::string told_centre;     // what it was last told: "reachable", "unreachable"
    std::string refused_policy;  // the version it last refused, not sent again
  };

  void connect_centre();
  void pass();
  void sync(Daemon& d);
  nlohmann::json call(Daemon& d, const std::string& cmd, nlohmann::json args,
                      const std::optional<std::string>& key = std::nullopt);
  void ensure_project(Daemon& d);
  void ship_requests(Daemon& d, const nlohmann::json& status);
  void ship_audit(Daemon& d);
  // Whether a head waits for records the ledger does not hold yet.
  bool ship_heads(Daemon& d);
  void apply_decisions(Daemon& d);
  // The machine's policy rows in force for the daemon's project, sent as
  // policy.apply when their digest is not the version the daemon holds.
  void sync_policy(Daemon& d, const nlohmann::json& status);
  void tell_centre(Daemon& d, bool reachable, const std::string& detail, bool force = false);
  void centre_lost(const std::string& why);
  void wait(const std::atomic<bool>& stop);

  BridgeOptions options_;
  std::optional<PgConnection> db_;
  std::string machine_;
  std::vector<Daemon> daemons_;
  std::chrono::steady_clock::time_point next_poll_{};
  std::chrono::steady_clock::time_point settle_{};  // a pass due after an event, if any
};

}  // namespace leasefs::fleet

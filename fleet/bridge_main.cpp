// leasefs-bridge: a machine's bridge to the fleet's ledger, and the ledger's
// migrations.
//
//   leasefs-bridge run --credentials FILE --daemon ROOT=SOCKET... [--repoll SECONDS]
//   leasefs-bridge migrate --credentials FILE
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>

#include "fleet/bridge.hpp"
#include "fleet/credentials.hpp"
#include "fleet/migrations.hpp"

namespace {

std::atomic<bool> g_stop{false};

void on_stop(int) {
  g_stop = true;
}

int fail(const std::string& text) {
  std::fprintf(stderr, "leasefs-bridge: %s\n", text.c_str());
  return 1;
}

int run(const std::string& credentials, const std::vector<std::string>& daemons, int repoll_s) {
  using namespace leasefs::fleet;
  if (::geteuid() == 0) {
    return fail("refusing to run as root: run the bridge as its own user (useradd leasefs-bridge)");
  }
  BridgeOptions o;
  try {
    o.conninfo = read_credentials(credentials);
  } catch (const CredentialsRefused& e) {
    return fail(e.what());
  }
  for (const std::string& d : daemons) {
    const size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == d.size() || d[0] != '/') {
      return fail("--daemon " + d + ": expected ROOT=SOCKET, both absolute paths");
    }
    o.daemons.push_back({d.substr(0, eq), d.substr(eq + 1)});
  }
  o.repoll = std::chrono::seconds(repoll_s);
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  try {
    Bridge(std::move(o)).run(g_stop);
  } catch (const BridgeRefused& e) {
    return fail(e.what());
  }
  return 0;
}

int migrate(const std::string& credentials) {
  using namespace leasefs::fleet;
  try {
    PgConnection db = PgConnection::open(read_credentials(credentials));
    const std::vector<int> applied =
        leasefs::fleet::migrate(db, parse_migrations(ledger_schema_text()));
    if (applied.empty()) {
      std::printf("the ledger's schema is current\n");
    } else {
      for (int v : applied) std::printf("applied migration %d\n", v);
    }
    return 0;
  } catch (const CredentialsRefused& e) {
    return fail(e.what());
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "leasefs-bridge: carries a machine's lease requests and audit to the fleet's "
      "PostgreSQL ledger, and its decisions back"};
  app.set_version_flag("--version", "leasefs-bridge " LEASEFS_VERSION);
  app.require_subcommand(1);
  std::string credentials;
  std::vector<std::string> daemons;
  int repoll_s = 30;
  CLI::App* r = app.add_subcommand("run", "run the bridge (as its own user, never root)");
  r->add_option("--credentials", credentials,
                "file holding the machine role's libpq connection string (mode 600, the "
                "bridge's own)")
      ->required();
  r->add_option("--daemon", daemons, "ROOT=SOCKET: a local daemon to serve (repeatable)")
      ->required();
  r->add_option("--repoll", repoll_s, "seconds between polls of the ledger besides NOTIFY")
      ->check(CLI::Range(1, 3600));
  CLI::App* m = app.add_subcommand("migrate", "apply the ledger's schema migrations");
  m->add_option("--credentials", credentials,
                "file holding the administrator's libpq connection string (mode 600)")
      ->required();
  CLI11_PARSE(app, argc, argv);
  if (r->parsed()) return run(credentials, daemons, repoll_s);
  return migrate(credentials);
}

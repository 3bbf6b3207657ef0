#include "leasectl/fleet_command.hpp"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/inert_text.hpp"
#include "fleet/chain_verifier.hpp"
#include "fleet/person_desk.hpp"
#include "fleet/person_login.hpp"
#include "leasectl/fleet_console.hpp"

namespace leasefs::leasectl {

namespace {

// As leasectl's other commands: 1 refused (or a finding), 2 usage, 3 nothing answers.
constexpr int kExitOk = 0;
constexpr int kExitRefused = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoLedger = 3;

struct FleetOptions {
  std::string db;  // a libpq connection string; "" leaves it to PGSERVICE, PGHOST...
  std::string id;
  std::string reason;
  std::string project;
  std::string path_prefix;
  std::vector<std::string> key_files;
  std::string listen = FleetConsoleOptions{}.listen;
};

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + base::quote_name(s);
  return out.empty() ? "-" : out;
}

// Opens the ledger and runs `fn` on it; the ways in which that fails, said.
int with_ledger(const FleetOptions& o, const std::function<int(fleet::PgConnection&)>& fn) {
  try {
    fleet::PgConnection db = fleet::open_as_person(o.db);
    return fn(db);
  } catch (const fleet::LoginRefused& e) {
    std::fprintf(stderr, "leasectl fleet: %s\n", e.what());
    return kExitUsage;
  } catch (const fleet::DecisionRefused& e) {
    std::fprintf(stderr, "leasectl fleet: refused: %s\n", base::inert(e.what()).c_str());
    return kExitRefused;
  } catch (const fleet::PgError& e) {
    const bool no_server = e.sqlstate().empty() || e.sqlstate().starts_with("08");
    std::fprintf(stderr, "leasectl fleet: %s: %s\n",
                 no_server ? "the ledger does not answer" : "the ledger refused",
                 base::inert(e.what()).c_str());
    return no_server ? kExitNoLedger : kExitRefused;
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "leasectl fleet: %s\n", base::inert(e.what()).c_str());
    return kExitUsage;
  }
}

int print_pending(fleet::PgConnection& db) {
  const auto pending = fleet::pending_requests(db);
  if (pending.empty()) {
    std::printf("no pending request on the projects delegated to %s\n", db.user().c_str());
  }
  for (const auto& r : pending) {
    std::printf("request %s  %s:%s  task %s  turn %s\n", r.id.c_str(), r.machine.c_str(),
                base::quote_name(r.root).c_str(), base::inert(r.task_id).c_str(), r.turn.c_str());
    std::printf("  paths: %s\n  ops: %s\n", joined(r.paths).c_str(), joined(r.ops).c_str());
    std::printf("  asked by: uid %s pid %s %s\n", r.requester_uid.c_str(), r.requester_pid.c_str(),
                base::inert(r.requester_command).c_str());
    std::printf("  reason: %s\n", base::inert(r.reason).c_str());
  }
  return kExitOk;
}

int decide(fleet::PgConnection& db, const FleetOptions& o, const std::string& decision) {
  const char* done = decision == "approve" ? "approved" : "rejected";
  if (o.id.empty() == o.project.empty()) {
    std::fprintf(stderr,
                 "leasectl fleet %s: name one request (ID) or a project (--project, with "
                 "--path-prefix to narrow it)\n",
                 decision.c_str());
    return kExitUsage;
  }
  if (!o.id.empty()) {
    const fleet::Decided d = fleet::decide(db, o.id, decision, o.reason);
    std::printf("%s request %s (decision %s, by %s)\n", done, d.request_id.c_str(),
                d.decision_id.c_str(), db.user().c_str());
    return kExitOk;
  }
  const auto decided = fleet::decide_matching(db, o.project, o.path_prefix, decision, o.reason);
  for (const auto& d : decided) {
    std::printf("%s request %s (decision %s)\n", done, d.request_id.c_str(), d.decision_id.c_str());
  }
  std::printf("%s %zu request(s) of %s%s, one decision each, by %s\n", done, decided.size(),
              base::quote_name(o.project).c_str(),
              o.path_prefix.empty() ? "" : (" under " + base::quote_name(o.path_prefix)).c_str(),
              db.user().c_str());
  return kExitOk;
}

int verify(fleet::PgConnection& db, const FleetOptions& o) {
  std::vector<signing::VerifierKey> keys;
  for (const auto& path : o.key_files) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("--key-file " + path + ": cannot be read");
    std::stringstream text;
    text << in.rdbuf();
    for (auto& k : fleet::parse_verifier_keys(text.str(), path)) keys.push_back(std::move(k));
  }
  const auto chains = fleet::verify_chains(db, keys);
  size_t records = 0, heads = 0, bad = 0;
  for (const auto& c : chains) {
    records += c.records;
    heads += c.signed_heads;
    if (c.findings.empty()) continue;
    ++bad;
    const auto& f = c.findings.front();
    std::printf("%s:%s (project %s): %s: %s\n", c.machine.c_str(), base::quote_name(c.root).c_str(),
                c.project_id.c_str(), f.kind.c_str(), base::inert(f.message).c_str());
    if (c.findings.size() > 1) std::printf("  and %zu more finding(s)\n", c.findings.size() - 1);
  }
  std::printf("%zu chains, %zu records, %zu signed heads: ", chains.size(), records, heads);
  if (bad == 0) {
    std::printf("clean\n");
    return kExitOk;
  }
  std::printf("%zu chain(s) with findings\n", bad);
  return kExitRefused;
}

}  // namespace

void add_fleet_command(CLI::App& app, std::function<int()>& run) {
  auto o = std::make_shared<FleetOptions>();
  // `fleet report` (the bridge's word to a daemon) may have made the group already.
  CLI::App* fleet = nullptr;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == "fleet") fleet = sub;
  }
  if (!fleet) fleet = app.add_subcommand("fleet");
  fleet->description(
      "the fleet's ledger under your own database role: pending requests, decisions, "
      "and the verifier of shipped audit chains");
  fleet->require_subcommand(0, 1);
  fleet->add_option("--db", o->db,
                    "libpq connection string, without a password (default: PGSERVICE, PGHOST, "
                    "PGUSER... and ~/.pgpass, as libpq reads them)");
  auto list = [&run, o] { run = [o] { return with_ledger(*o, print_pending); }; };
  fleet->callback([fleet, list] {
    if (fleet->get_subcommands().empty()) list();
  });
  fleet->add_subcommand("requests", "every pending request you may decide, on every machine")
      ->callback(list);
  for (const std::string decision : {"approve", "reject"}) {
    auto* sub = fleet->add_subcommand(
        decision, decision +
                      " request ID, or every pending one of --project under --path-prefix "
                      "(one decision row each)");
    sub->add_option("ID", o->id, "the ledger's request id");
    sub->add_option("--reason", o->reason, "why, recorded with the decision");
    sub->add_option("--project", o->project, "a project's root or id: every pending request of it");
    sub->add_option("--path-prefix", o->path_prefix,
                    "with --project: only requests whose paths are all under DIR")
        ->type_name("DIR");
    sub->callback([&run, o, decision] {
      run = [o, decision] {
        return with_ledger(*o, [&](fleet::PgConnection& db) { return decide(db, *o, decision); });
      };
    });
  }
  auto* console_cmd = fleet->add_subcommand(
      "console", "serve a web page on loopback to see and decide the requests you may decide");
  console_cmd
      ->add_option("--listen", o->listen,
                   "ADDR:PORT on a loopback address (default 127.0.0.1 and a free port)")
      ->capture_default_str();
  console_cmd->callback([&run, o] { run = [o] { return run_fleet_console({o->listen, o->db}); }; });
  auto* verify_cmd = fleet->add_subcommand(
      "verify", "walk every (machine, project) chain of shipped audit records and signed heads");
  verify_cmd
      ->add_option("--key-file", o->key_files,
                   "a file of machines' verifier keys, one a line (a daemon's "
                   "audit-signing.key.pub); repeatable")
      ->type_name("FILE");
  verify_cmd->callback([&run, o] {
    run = [o] { return with_ledger(*o, [&](fleet::PgConnection& db) { return verify(db, *o); }); };
  });
}

}  // namespace leasefs::leasectl

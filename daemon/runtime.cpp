// The daemon's control plane for one root, assembled in dependency order:
//
//   .longrun lock -> state store -> memory, ledger, idempotency, audit (memory.db,
//   audit.jsonl) -> event bus -> gate, reporter -> audit writer -> service (loads
//   state, revokes any old lease, publishes the first snapshot) -> pump ->
//   control server.
//
// The audit writer (report/audit_writer.hpp) subscribes before the service
// exists, so that nothing it emits is missed. stop() undoes the moving parts in
// reverse: server, reports, bus, audit.
#include "daemon/runtime.hpp"

#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>

#include "base/disk_reserve.hpp"
#include "base/error.hpp"
#include "base/fd_limit.hpp"
#include "control/ask_desk.hpp"
#include "control/commands.hpp"
#include "control/render.hpp"
#include "control/server.hpp"
#include "control/socket_acl.hpp"
#include "daemon/heads_check.hpp"
#include "daemon/heads_listing.hpp"
#include "daemon/store_memo.hpp"
#include "memory/audit_log.hpp"
#include "memory/idempotency_store.hpp"
#include "memory/ledger.hpp"
#include "memory/sqlite_memory_store.hpp"
#include "protocol/socket_path.hpp"
#include "report/audit_writer.hpp"
#include "report/event_bus.hpp"
#include "report/head_signer.hpp"
#include "report/pump.hpp"
#include "service/journal_use_cases.hpp"
#include "service/service.hpp"
#include "signing/key_name.hpp"
#include "state/longrun_dir.hpp"
#include "state/state_store.hpp"

namespace leasefs::daemon {

struct Runtime::Impl {
  Impl(int root_fd, std::string root, RuntimeOptions opts)
      : root_path(std::move(root)),
        options(std::move(opts)),
        socket_path(options.socket_path.empty() ? protocol::default_socket_path(root_path)
                                                : options.socket_path),
        dir(root_fd, root_path),
        reserve(dir.fd(), "reserve"),
        store(dir),
        memory(dir.path("memory.db")),
        ledger(dir.path("memory.db")),
        idempotency(dir.path("memory.db")),
        audit(dir.path("audit.jsonl"), dir.path("memory.db"),
              memory::AuditLog::Options{options.audit_fsync}),
        signer(head_signer_options(dir, root_path, options.signing_key_path)),
        audit_writer(bus, audit, reserve),
        memo(idempotency) {
    try {
      audit_writer.set_head_signer(&signer);
      dir.share_with(options.agent_gid);
      gate.set_protected_globs(options.protected_globs);  // before the first publication
      service = std::make_unique<service::Service>(store, memory, &ledger, gate, bus);
      service->set_disk_reserve(&reserve);
      service->set_heads_status([this] { return signer.status(); });
      service->set_heads_note(signer.unsigned_note());
      signer.set_on_change(
          [s = service.get()](const std::string& note) { s->set_heads_note(note); });
      desk = std::make_unique<control::AskDesk>(*service);
      desk->start();
      asks.attach_desk(desk.get());
      service->set_ask_channel(&asks, options.ask_ms);
      if (options.journal.enabled) {
        journal = std::make_unique<journal::Journal>(root_fd, dir.fd(), options.journal);
        journal->set_disk_reserve(&reserve);
        // Each entry's hash goes to the audit chain; one not undoable is said in watch.
        journal->set_listener([this](const journal::Entry& e) {
          // Written member by member, on every journal entry, without a JSON
          // object (base/json_text.hpp). The entry's "seq" is its own in the
          // turn's index: the bus's "seq" replaces it, as it always has.
          base::ObjectText ev;
          ev.set("type", "journal");
          ev.set("turn", e.turn);
          ev.set("path", e.path);
          ev.set("kind", journal::kind_name(e.kind));
          ev.set("hash", e.hash);
          ev.set("undoable", e.undoable);
          if (!e.why.empty()) ev.set("why", e.why);
          if (!e.origin.empty()) ev.set("origin", e.origin);
          bus.publish(std::move(ev));
        });
        journal_cases =
            std::make_unique<service::JournalUseCases>(*service, *journal, bus, &ledger);
      }
      pump = std::make_unique<report::Pump>(
          [s = service.get()](const std::vector<nlohmann::json>& refusals, uint64_t extra) {
            s->note_refusals(refusals, extra);
          },
          bus, options.hash_limit_bytes);
      pump->start();
      reporter.set_sink(pump.get());
      control::CommandContext ctx;
      ctx.service = service.get();
      ctx.audit_verify = [this](const std::optional<std::string>& key) { return verify(key); };
      ctx.control_stats = [c = budget_counters] { return c->to_json(); };
      ctx.journal = journal_cases.get();
      ctx.flush_refusals = [p = pump.get()] { p->flush_refusals(); };
      ctx.audit_since = [this](int64_t since_ms) {
        constexpr size_t kMaxReplayed = 1000;  // one reply; the rest is in the file
        size_t left_out = 0;
        auto events = audit.select({.since_ms = since_ms}, kMaxReplayed, &left_out);
        return nlohmann::json{{"replayed", std::move(events)}, {"replay_left_out", left_out}};
      };
      ctx.audit_select = [this](const memory::AuditQuery& query) {
        constexpr size_t kMaxShown = 10000;  // one reply; the rest is in the file
        size_t left_out = 0;
        auto events = audit.select(query, kMaxShown, &left_out);
        return nlohmann::json{{"records", std::move(events)}, {"left_out", left_out}};
      };
      ctx.audit_lines = [this](uint64_t after_seq, size_t max) {
        nlohmann::json records = nlohmann::json::array();
        for (auto& r : audit.lines_after(after_seq, max)) {
          records.push_back({{"seq", r.seq}, {"line", std::move(r.line)}});
        }
        return nlohmann::json{{"records", std::move(records)}, {"chain_length", audit.count()}};
      };
      ctx.audit_heads = [this](uint64_t after_size, size_t max) {
        constexpr size_t kMaxBytes = size_t{512} << 10;  // well inside one reply line
        return daemon::list_signed_heads(heads_text(), after_size, max, kMaxBytes);
      };
      dispatcher = std::make_unique<control::Dispatcher>(std::move(ctx), &memo);
    } catch (...) {
      shutdown();
      throw;
    }
  }

  ~Impl() { shutdown(); }

  static report::HeadSigner::Options head_signer_options(const state::LongrunDir& dir,
                                                         const std::string& root,
                                                         const std::string& key_path) {
    const std::string name = signing::machine_key_name();
    return {key_path, dir.path("signed_heads"), name, signing::log_origin(name, root)};
  }

  // The chain, then its signed heads; both read while no batch is appended, so
  // that they agree with each other.
  nlohmann::json verify(const std::optional<std::string>& key) {
    auto hold = audit_writer.hold_appends();
    nlohmann::json out = control::render(audit.verify());
    if (!out.value("ok", false)) return out;
    const std::string text = read_heads_file();
    out["signed_heads"] = key ? check_signed_heads(audit.links(), text, signer.origin(), key)
                              : check_signed_heads({}, text, signer.origin(), std::nullopt);
    return out;
  }

  // The signed heads file as it is between two appends ("" when there is none).
  std::string heads_text() {
    auto hold = audit_writer.hold_appends();  // a head is appended under this lock
    return read_heads_file();
  }
  std::string read_heads_file() const {
    std::ifstream in(signer.heads_path(), std::ios::binary);
    if (!in) return {};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  void start_control() {
    std::lock_guard lock(mu);
    if (stopped) throw Error(Errc::kIoError, "the runtime was stopped");
    if (server) return;
    base::raise_fd_limit();
    control::ServerOptions so;
    so.socket_path = socket_path;
    so.socket_mode = options.socket_mode;
    so.socket_gid = options.socket_gid;
    so.approvers.owner_uid = ::geteuid();
    so.approvers.uids = options.approver_uids;
    so.approvers.gids = options.approver_gids;
    so.idle_timeout = options.idle_timeout;
    so.write_timeout = options.write_timeout;
    so.counters = budget_counters;
    auto s = std::make_unique<control::Server>(so, *dispatcher, bus);
    s->start();
    // Approvers named with --approver-uid/--approver-gid get an ACL entry each on
    // the socket (the agent's group's with --agent, else the owner's alone): a
    // named approver that could not connect would only be told "permission denied".
    std::vector<uid_t> uids;
    for (uid_t u : options.approver_uids) {
      if (u != 0 && u != ::geteuid()) uids.push_back(u);
    }
    if (auto why = control::allow_on_socket(socket_path, uids, options.approver_gids)) {
      s->stop();
      throw Error(Errc::kIoError, *why);
    }
    server = std::move(s);
  }

  void shutdown() {
    std::lock_guard lock(mu);
    if (stopped) return;
    stopped = true;
    if (server) server->stop();
    // Fail closed for whatever still reaches the filesystem (files held open
    // through a detached mount): no command runs any more to revoke a grant.
    gate.publish(gate::GateSnapshot{});  // also ends every parked ask (fuse/parked_requests.hpp)
    asks.attach_desk(nullptr);
    if (desk) desk->stop();
    reporter.set_sink(nullptr);
    if (pump) pump->stop();
    bus.close_all();
    audit_writer.stop();    // after it has written what was queued
    signer.stop_telling();  // before the service it tells goes
  }

  std::string root_path;
  RuntimeOptions options;
  std::string socket_path;
  state::LongrunDir dir;
  base::DiskReserve reserve;  // before the stores, so that it is allocated first
  state::StateStore store;
  memory::SqliteMemoryStore memory;
  memory::Ledger ledger;
  memory::IdempotencyStore idempotency;
  memory::AuditLog audit;
  report::EventBus bus;
  gate::Gate gate;
  report::Reporter reporter{gate};
  gate::AskChannel asks;      // before the service and the desk, which point to it
  report::HeadSigner signer;  // before the audit writer, which calls it
  report::AuditWriter audit_writer;
  StoreMemo memo;
  std::unique_ptr<service::Service> service;
  std::unique_ptr<control::AskDesk> desk;
  std::unique_ptr<journal::Journal> journal;
  std::unique_ptr<service::JournalUseCases> journal_cases;
  std::unique_ptr<report::Pump> pump;
  std::unique_ptr<control::Dispatcher> dispatcher;
  std::unique_ptr<control::Server> server;
  std::shared_ptr<control::BudgetCounters> budget_counters =
      std::make_shared<control::BudgetCounters>();

  std::mutex mu;  // guards server and stopped
  bool stopped = false;
};

Runtime::Runtime(int root_fd, std::string root_path, RuntimeOptions options)
    : impl_(std::make_unique<Impl>(root_fd, std::move(root_path), std::move(options))) {}

Runtime::~Runtime() = default;

void Runtime::set_foreign_mounts(std::vector<service::ForeignMount> mounts) {
  impl_->service->set_foreign_mounts(std::move(mounts));
}

void Runtime::set_file_plane_status(std::function<nlohmann::json()> fn) {
  impl_->service->set_file_plane_status(std::move(fn));
}

gate::Gate& Runtime::gate() noexcept {
  return impl_->gate;
}

report::Reporter& Runtime::reporter() noexcept {
  return impl_->reporter;
}

journal::Journal* Runtime::journal() noexcept {
  return impl_->journal.get();
}

gate::AskChannel& Runtime::asks() noexcept {
  return impl_->asks;
}

void Runtime::set_undo_touch(std::function<void(const std::string&)> fn) {
  if (impl_->journal_cases) impl_->journal_cases->set_touch(std::move(fn));
}

base::DiskReserve& Runtime::disk_reserve() noexcept {
  return impl_->reserve;
}

void Runtime::disk_changed() {
  impl_->service->disk_changed();
}

std::string Runtime::longrun_path(std::string_view name) const {
  return impl_->dir.path(name);
}

const std::string& Runtime::socket_path() const noexcept {
  return impl_->socket_path;
}

void Runtime::start_control() {
  impl_->start_control();
}

void Runtime::stop() {
  impl_->shutdown();
}

}  // namespace leasefs::daemon

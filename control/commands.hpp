// The command table: every protocol command by name, whether it changes state
// (and so honours an idempotency key), and the handler that turns its JSON
// arguments into a typed call on the Service. The table is explicit: a command
// that is not listed here does not exist.
//
// Handlers throw; Dispatcher turns every exception into an error reply, so one
// bad request never takes a connection or the daemon down.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "control/status_reply.hpp"
#include "gate/actor.hpp"
#include "memory/audit_query.hpp"
#include "protocol/request.hpp"

namespace leasefs::service {
class Service;
class JournalUseCases;
}  // namespace leasefs::service

namespace leasefs::control {

// What handlers reach: the service, and the audit log's chain check.
struct CommandContext {
  service::Service* service = nullptr;
  // Returns {"ok":bool, ...}; an {"ok":false} answer becomes Error{audit_broken}.
  // With a verifier key, the signed heads are checked too (they throw
  // Error{audit_broken} naming the first finding).
  std::function<nlohmann::json(const std::optional<std::string>& key)> audit_verify;
  // What the control socket's budgets refused so far (shown by `status`); may be empty.
  std::function<nlohmann::json()> control_stats;
  // `watch --since`: {"replayed": [events], "replay_left_out": n}; may be empty.
  std::function<nlohmann::json(int64_t since_ms)> audit_since;
  // `audit show`: the records a query selects ({"records": [...], "left_out": N}).
  std::function<nlohmann::json(const memory::AuditQuery&)> audit_select;
  // `audit.records`: the records after a seq, as lines ({"records": [{"seq", "line"}]}).
  std::function<nlohmann::json(uint64_t after_seq, size_t max)> audit_lines;
  // `audit.heads`: the signed heads after a size (daemon/heads_listing.hpp).
  std::function<nlohmann::json(uint64_t after_size, size_t max)> audit_heads;
  // Makes the refusals counted so far part of what `status` reads; may be empty.
  std::function<void()> flush_refusals;
  // The journal's diff and undo; null when the daemon keeps no journal.
  service::JournalUseCases* journal = nullptr;
  // status's last reply text, with what it shows (shared by copies of the context).
  std::shared_ptr<StatusReplies> status_replies = std::make_shared<StatusReplies>();
};

// What a handler answers: the result object, or its text already serialized by
// base::json_text (status keeps its text while nothing it shows changes).
struct Result {
  Result(nlohmann::json v) : value(std::move(v)) {}
  explicit Result(std::shared_ptr<const std::string> t) : text(std::move(t)) {}
  // The result as a value (the text parsed, when that is what it holds).
  nlohmann::json take_value() &&;

  nlohmann::json value;                     // when text is null
  std::shared_ptr<const std::string> text;  // one JSON document
};

// One handler per registry line, each in the file of its group
// (control/commands_<group>.cpp): adding a command is a line in
// protocol/command_list.def and its handle_<id>.
#define LEASEFS_COMMAND(id, name, mutating, streams, summary) \
  Result handle_##id(CommandContext& ctx, const nlohmann::json& args, const gate::Actor& actor);
#include "protocol/command_list.def"
#undef LEASEFS_COMMAND

using Handler = Result (*)(CommandContext& ctx, const nlohmann::json& args,
                           const gate::Actor& actor);

struct Command {
  std::string_view name;
  bool mutating = false;
  bool streams = false;  // the reply is followed by a stream of events (watch)
  Handler handler = nullptr;
};

const std::vector<Command>& command_table();
const Command* find_command(std::string_view name) noexcept;

// Remembers the replies of mutating commands by idempotency key, across restarts.
// The Dispatcher scopes keys to the caller ("<uid>:<key>"), so one caller's key
// never replays another caller's reply, and stores a fingerprint of the request
// (command and arguments) so that a key reused for a different request is refused
// instead of answered with a reply that was not for it.
class ReplyMemo {
 public:
  struct Entry {
    std::string command;
    std::string request_hash;  // request_fingerprint() of the request; empty if unknown
    nlohmann::json reply;      // without "id"
  };
  virtual ~ReplyMemo() = default;
  virtual std::optional<Entry> lookup(const std::string& key) = 0;
  virtual void remember(const std::string& key, const std::string& command,
                        const std::string& request_hash, const nlohmann::json& reply) = 0;
};

// SHA-256 (hex) of a request's command and arguments, independent of the order in
// which the arguments were written.
std::string request_fingerprint(std::string_view cmd, const nlohmann::json& args);

// The memo key of `key` sent by `actor`: keys are per caller uid.
std::string scoped_idempotency_key(const gate::Actor& actor, std::string_view key);

// The error reply for the exception being handled (call inside a catch block):
// Error keeps its code, a ledger refusal its code, memory failures become
// memory_error, anything else internal.
nlohmann::json reply_for_current_exception(const nlohmann::json& id);

class Dispatcher {
 public:
  struct Outcome {
    std::string line;     // the reply as the wire carries it (protocol::to_line)
    bool stream = false;  // ok reply to a streaming command: start streaming after it
    // The reply as a value (the line parsed): for the watch's ack, and tests.
    nlohmann::json reply() const;
  };

  Dispatcher(CommandContext ctx, ReplyMemo* memo) : ctx_(std::move(ctx)), memo_(memo) {}

  // One line in, one reply out. Never throws (except std::bad_alloc's cousins
  // it cannot report).
  Outcome handle_line(std::string_view line, const gate::Actor& actor) noexcept;
  Outcome dispatch(const protocol::Request& request, const gate::Actor& actor) noexcept;
  // The same, for the control socket's loop: answers `line` only when it is a
  // short request for a command that runs on the loop (runs_on_loop) and
  // nothing it needs is held by another thread; otherwise nullopt, having
  // changed nothing, and the line goes to a worker.
  std::optional<Outcome> try_on_loop(std::string_view line, const gate::Actor& actor) noexcept;

 private:
  // dispatch() without its last catch: throws base::WouldBlock, and only that.
  Outcome answer(const protocol::Request& request, const gate::Actor& actor);
  Outcome run(const Command& command, const protocol::Request& request, const gate::Actor& actor);

  CommandContext ctx_;
  ReplyMemo* memo_;
  // Serializes keyed mutating commands so that two concurrent requests with one
  // key cannot both miss the memo and both run. The Service serializes commands
  // anyway, so this costs nothing real.
  std::mutex keyed_mu_;
};

}  // namespace leasefs::control

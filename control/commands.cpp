#include "control/commands.hpp"

#include <spdlog/spdlog.h>

#include "base/error.hpp"
#include "base/sha256.hpp"
#include "base/would_block.hpp"
#include "memory/memory_error.hpp"
#include "service/service.hpp"

namespace leasefs::control {

using nlohmann::json;

const std::vector<Command>& command_table() {
  // One handler per registry line: a line without a handle_<id> does not compile.
  static const std::vector<Command> table{
#define LEASEFS_COMMAND(id, name, mutating, streams, summary) \
  {name, mutating, streams, handle_##id},
#include "protocol/command_list.def"
#undef LEASEFS_COMMAND
  };
  return table;
}

bool runs_on_loop(std::string_view name) noexcept {
  // Each of these answers from memory and changes nothing before it holds the
  // service's lock, and none waits for a sync before its reply (status reads;
  // turn and end-turn revoke, kAfterReply): so the loop may run them itself,
  // and an approver's turn does not queue behind the agent's commands. Whatever
  // else they would need (a ledger query, a fold of the state log, a scan of
  // /proc, an ask to end) hands them to a worker (base/would_block.hpp).
  return name == "status" || name == "turn" || name == "end-turn";
}

const Command* find_command(std::string_view name) noexcept {
  for (const auto& c : command_table()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

json reply_for_current_exception(const json& id) {
  try {
    throw;
  } catch (const Error& e) {  // memory::LedgerError is one too
    return protocol::error_reply(id, e.errc(), e.what());
  } catch (const memory::MemoryError& e) {
    spdlog::error("control: memory error: {}", e.what());
    return protocol::error_reply(id, Errc::kMemoryError, e.what());
  } catch (const std::exception& e) {
    spdlog::error("control: internal error: {}", e.what());
    return protocol::error_reply(id, Errc::kInternal, std::string("internal error: ") + e.what());
  } catch (...) {
    spdlog::error("control: internal error: unknown exception");
    return protocol::error_reply(id, Errc::kInternal, "internal error");
  }
}

namespace {

// What is left to send when even the error reply cannot be made (out of memory).
constexpr const char* kNullLine = "null\n";

Dispatcher::Outcome error_outcome(const json& id) {
  return {protocol::to_line(reply_for_current_exception(id)), false};
}

}  // namespace

json Result::take_value() && {
  return text ? json::parse(*text) : std::move(value);
}

json Dispatcher::Outcome::reply() const {
  return json::parse(line);
}

Dispatcher::Outcome Dispatcher::handle_line(std::string_view line,
                                            const gate::Actor& actor) noexcept {
  json id;  // null until the parser finds one
  try {
    protocol::Request req = protocol::parse_request(line, &id);
    return dispatch(req, actor);
  } catch (...) {
    try {
      return error_outcome(id);
    } catch (...) {
      return Outcome{kNullLine, false};
    }
  }
}

Dispatcher::Outcome Dispatcher::dispatch(const protocol::Request& req,
                                         const gate::Actor& actor) noexcept {
  try {
    return answer(req, actor);
  } catch (...) {
    return Outcome{kNullLine, false};  // out of memory for the error reply itself
  }
}

Dispatcher::Outcome Dispatcher::answer(const protocol::Request& req, const gate::Actor& actor) {
  try {
    const Command* command = find_command(req.cmd);
    if (!command) {
      throw Error(Errc::kUnknownCommand, "unknown command '" + req.cmd + "'");
    }
    return run(*command, req, actor);
  } catch (const base::WouldBlock&) {
    throw;
  } catch (...) {
    return error_outcome(req.id);
  }
}

std::optional<Dispatcher::Outcome> Dispatcher::try_on_loop(std::string_view line,
                                                           const gate::Actor& actor) noexcept {
  // Parsing is bounded by the line's length: a long line is a worker's.
  constexpr size_t kLoopLineBytes = 4096;
  if (line.size() > kLoopLineBytes) return std::nullopt;
  try {
    json id;
    protocol::Request req = protocol::parse_request(line, &id);
    // A keyed request consults the reply memo, which is SQL.
    if (!runs_on_loop(req.cmd) || req.idempotency_key) return std::nullopt;
    base::NonBlockingScope scope;
    return answer(req, actor);
  } catch (...) {
    return std::nullopt;  // would block, or a bad line: a worker answers it as ever
  }
}

Dispatcher::Outcome Dispatcher::run(const Command& command, const protocol::Request& req,
                                    const gate::Actor& actor) {
  // The handler's result, or its error reply (without id) and whether that may be
  // remembered: refusals are final; storage and internal failures may go away on retry.
  struct Answer {
    std::optional<Result> result;
    json error;
    bool final = true;
  };
  auto call = [&]() -> Answer {
    try {
      Result result = command.handler(ctx_, req.args, actor);
      // Answered only once on disk, outside the service's lock (group commit).
      if (ctx_.service) ctx_.service->await_durable();
      return {std::move(result), nullptr, true};
    } catch (const base::WouldBlock&) {
      throw;
    } catch (...) {
      json reply = reply_for_current_exception(nullptr);
      auto c = errc_from_wire(reply["error"].value("code", ""));
      return {std::nullopt, std::move(reply), c != Errc::kMemoryError && c != Errc::kInternal};
    }
  };
  auto outcome = [&](const json& reply) {
    return Outcome{protocol::to_line(reply), command.streams && reply.value("ok", false)};
  };

  if (!command.mutating || !req.idempotency_key || !memo_) {
    Answer a = call();
    if (!a.result) {
      a.error["id"] = req.id;
      return outcome(a.error);
    }
    if (a.result->text) return {protocol::ok_reply_line(req.id, *a.result->text), command.streams};
    return outcome(protocol::ok_reply(req.id, std::move(a.result->value)));
  }

  std::lock_guard lock(keyed_mu_);
  const std::string& key = *req.idempotency_key;
  const std::string scoped = scoped_idempotency_key(actor, key);
  const std::string fingerprint = request_fingerprint(req.cmd, req.args);
  if (auto seen = memo_->lookup(scoped)) {
    if (seen->command != req.cmd) {
      throw Error(
          Errc::kIdempotencyConflict,
          "idempotency key '" + key + "' was already used for command '" + seen->command + "'");
    }
    if (seen->request_hash != fingerprint) {
      throw Error(Errc::kIdempotencyConflict,
                  "idempotency key '" + key + "' was already used for a '" + seen->command +
                      "' with different arguments; use a new key for a new request");
    }
    json reply = std::move(seen->reply);
    reply["id"] = req.id;
    reply["replayed"] = true;
    return outcome(reply);
  }
  Answer a = call();
  json reply = a.result ? protocol::ok_reply(nullptr, std::move(*a.result).take_value())
                        : std::move(a.error);
  if (a.final) {
    try {
      memo_->remember(scoped, req.cmd, fingerprint, reply);
    } catch (const std::exception& e) {
      spdlog::warn("control: could not remember idempotency key '{}': {}", key, e.what());
    }
  }
  reply["id"] = req.id;
  return outcome(reply);
}

std::string request_fingerprint(std::string_view cmd, const json& args) {
  // json objects keep their keys sorted, so dump() is canonical for equal arguments.
  std::string text(cmd);
  text.push_back('\n');
  text += args.dump(-1, ' ', true, json::error_handler_t::replace);
  return base::sha256_hex(text);
}

std::string scoped_idempotency_key(const gate::Actor& actor, std::string_view key) {
  return std::to_string(actor.uid) + ":" + std::string(key);
}

}  // namespace leasefs::control

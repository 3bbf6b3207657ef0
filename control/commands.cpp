#include "control/commands.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "base/error.hpp"
#include "base/sha256.hpp"
#include "gate/op.hpp"
#include "gate/task_status.hpp"
#include "memory/ledger_error.hpp"
#include "memory/memory_error.hpp"
#include "protocol/arg_text.hpp"
#include "service/journal_use_cases.hpp"
#include "service/service.hpp"

namespace leasefs::gate::control {

namespace {

using nlohmann::json;

// Bounds on every argument: free text a person writes, names (paths, keywords,
// ids), lists. Past one, the request is refused (bad_request), never cut short.
constexpr size_t kMaxTextBytes = 16 * 1024;
constexpr size_t kMaxNoteBytes = 64 * 1024;  // memory.save content
constexpr size_t kMaxNameBytes = 1024;
constexpr size_t kMaxIdArgBytes = 64;
constexpr size_t kMaxListItems = 64;

// Typed access to a command's arguments. Every getter names the command and the
// argument in its error; finish() refuses arguments nobody asked for, so a typo
// ("path" for "paths") is an error instead of a silently wider grant.
class Args {
 public:
  Args(std::string_view cmd, const json& args) : cmd_(cmd), args_(args) {}

  std::string str(const char* name, size_t max = kMaxTextBytes) {
    auto v = opt_str(name, max);
    if (!v) missing(name, "string");
    return *v;
  }

  std::optional<std::string> opt_str(const char* name, size_t max = kMaxTextBytes) {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_string()) wrong(name, "string", *v);
    const auto& text = v->get_ref<const std::string&>();
    if (text.size() > max) too_long(name, max);
    return text;
  }

  std::string str_or(const char* name, std::string fallback, size_t max = kMaxTextBytes) {
    auto v = opt_str(name, max);
    return v ? *v : std::move(fallback);
  }

  bool flag(const char* name) {
    const json* v = find(name);
    if (!v) return false;
    if (!v->is_boolean()) wrong(name, "boolean", *v);
    return v->get<bool>();
  }

  std::vector<std::string> str_list(const char* name, size_t max_items = kMaxListItems,
                                    size_t max_item = kMaxNameBytes) {
    const json* v = find(name);
    if (!v) return {};
    if (!v->is_array()) wrong(name, "array of strings", *v);
    if (v->size() > max_items) {
      throw Error(Errc::kBadRequest, "command '" + std::string(cmd_) + "': argument '" + name +
                                         "' has more than " + std::to_string(max_items) +
                                         " elements");
    }
    std::vector<std::string> out;
    for (const auto& item : *v) {
      if (!item.is_string()) wrong(name, "array of strings", item, "an element");
      if (item.get_ref<const std::string&>().size() > max_item) too_long(name, max_item);
      out.push_back(item.get<std::string>());
    }
    return out;
  }

  // An array of strings, or one string of comma-separated items.
  std::vector<std::string> csv_list(const char* name) {
    const json* v = find(name);
    if (!v) return {};
    if (v->is_string()) {
      if (v->get_ref<const std::string&>().size() > kMaxNameBytes) too_long(name, kMaxNameBytes);
      return split_csv(v->get_ref<const std::string&>());
    }
    return str_list(name);
  }

  std::optional<uint64_t> opt_count(const char* name) {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0)) {
      wrong(name, "non-negative integer", *v);
    }
    return v->get<uint64_t>();
  }

  const json* raw(const char* name) { return find(name); }

  // Call last: refuses arguments the command does not take.
  void finish() {
    for (const auto& [key, value] : args_.items()) {
      (void)value;
      if (!seen_.contains(key)) {
        std::string known;
        for (const auto& k : seen_) known += (known.empty() ? "" : ", ") + k;
        std::string shown = key.size() > 64 ? key.substr(0, 64) + "..." : key;
        throw Error(Errc::kBadRequest,
                    "command '" + std::string(cmd_) + "' takes no argument '" + shown + "'" +
                        (known.empty() ? " (it takes none)" : " (it takes: " + known + ")"));
      }
    }
  }

  [[noreturn]] void missing(const char* name, const char* expected) {
    throw Error(Errc::kBadRequest, "command '" + std::string(cmd_) + "' needs argument '" + name +
                                       "' (" + expected + ")");
  }

  [[noreturn]] void too_long(const char* name, size_t max) {
    throw Error(Errc::kBadRequest, "command '" + std::string(cmd_) + "': argument '" + name +
                                       "' is longer than " + std::to_string(max) +
                                       " bytes; shorten it");
  }

  [[noreturn]] void invalid(const char* name, const std::string& why) {
    throw Error(Errc::kInvalidArgument,
                "command '" + std::string(cmd_) + "': argument '" + name + "' " + why);
  }

 private:
  const json* find(const char* name) {
    seen_.insert(name);
    auto it = args_.find(name);
    if (it == args_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  [[noreturn]] void wrong(const char* name, const char* expected, const json& got,
                          const char* what = nullptr) {
    throw Error(Errc::kBadRequest,
                "command '" + std::string(cmd_) + "': argument '" + name + "' must be a " +
                    expected +
                    (what ? std::string(", got ") + what + " of type " : std::string(", got ")) +
                    json_type_name(got));
  }

  std::string_view cmd_;
  const json& args_;
  std::set<std::string> seen_;
};

Service& service(CommandContext& ctx) {
  if (!ctx.service) throw Error(Errc::kInternal, "no service attached to the control plane");
  return *ctx.service;
}

TaskStatus status_arg(Args& a, const char* name, const std::string& text) {
  auto st = parse_status(text);
  if (!st) {
    std::string names;
    for (auto s : kAllStatuses) names += (names.empty() ? "" : ", ") + std::string(to_string(s));
    a.invalid(name, "is not a task status: '" + text + "' (one of: " + names + ")");
  }
  return *st;
}

json handle_status(CommandContext& ctx, const json& args, const Actor&) {
  Args a("status", args);
  a.finish();
  json out = service(ctx).status();
  if (ctx.control_stats) out["budget_refusals"] = ctx.control_stats();
  if (ctx.journal) out["journal"] = ctx.journal->status();
  return out;
}

json handle_start(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("start", args);
  StartArgs s;
  s.description = a.str("description");
  s.keywords = a.str_list("keywords");
  s.done_when = a.str_or("done_when", "");
  a.finish();
  return service(ctx).start(s, actor);
}

json handle_turn(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("turn", args);
  a.finish();
  return service(ctx).turn(actor);
}

json handle_end_turn(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("end-turn", args);
  a.finish();
  return service(ctx).end_turn(actor);
}

json handle_grant(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("grant", args);
  GrantArgs g;
  g.reason = a.str("reason");
  g.paths = a.str_list("paths");
  std::vector<std::string> ops = a.csv_list("ops");
  if (!ops.empty()) {
    std::string unknown;
    auto mask = parse_op_classes(ops, &unknown);
    if (!mask) {
      std::string known;
      for (const auto& n : op_class_names(kAllOps)) known += (known.empty() ? "" : ",") + n;
      a.invalid("ops", "names an unknown op class '" + unknown + "' (known: " + known + ")");
    }
    g.ops = *mask;
  }
  if (const json* ttl = a.raw("ttl")) {
    std::optional<int64_t> ms;
    if (ttl->is_string()) {
      ms = parse_duration_ms(ttl->get_ref<const std::string&>());
    } else if (ttl->is_number_integer() || ttl->is_number_unsigned()) {
      int64_t secs = ttl->is_number_unsigned() && ttl->get<uint64_t>() > INT64_MAX / 1000
                         ? -1
                         : ttl->get<int64_t>();
      if (secs > 0 && secs <= INT64_MAX / 1000) ms = secs * 1000;
    } else {
      throw Error(Errc::kBadRequest,
                  "command 'grant': argument 'ttl' must be a string like \"10m\" or an "
                  "integer number of seconds, got " +
                      json_type_name(*ttl));
    }
    if (!ms || *ms <= 0) {
      a.invalid("ttl",
                "must be a positive duration with a unit (30s, 10m, 2h, 1d) or an integer "
                "number of seconds");
    }
    g.ttl_ms = ms;
  }
  a.finish();
  return service(ctx).grant(g, actor);
}

json handle_revoke(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("revoke", args);
  auto id = a.opt_str("grant_id", kMaxIdArgBytes);
  a.finish();
  return service(ctx).revoke(id, actor);
}

json handle_request(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("request", args);
  RequestArgs r;
  r.reason = a.str("reason");
  r.paths = a.str_list("paths");
  a.finish();
  return service(ctx).request(r, actor);
}

json handle_approve(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("approve", args);
  std::string id = a.str("id", kMaxIdArgBytes);
  std::string reason = a.str_or("reason", "");
  a.finish();
  return service(ctx).approve(id, reason, actor);
}

json handle_reject(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("reject", args);
  std::string id = a.str("id", kMaxIdArgBytes);
  std::string reason = a.str_or("reason", "");
  a.finish();
  return service(ctx).reject(id, reason, actor);
}

json handle_checkpoint(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("checkpoint", args);
  CheckpointArgs c;
  c.retry_pending = a.flag("retry_pending");
  if (c.retry_pending) {
    c.summary = a.str_or("summary", "");
    c.next = a.str_or("next", "");
  } else {
    c.summary = a.str("summary");
    c.next = a.str("next");
  }
  if (auto st = a.opt_str("status", kMaxIdArgBytes)) c.status = status_arg(a, "status", *st);
  c.current_step = a.str_or("current_step", "");
  c.verified = a.str_or("verified", "");
  c.discarded = a.str_or("discarded", "");
  c.needs_approval = a.str_or("needs_approval", "");
  a.finish();
  return service(ctx).checkpoint(c, actor);
}

json handle_resume(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("resume", args);
  auto id = a.opt_str("task_id", kMaxIdArgBytes);
  a.finish();
  return service(ctx).resume(id, actor);
}

json handle_transition(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("transition", args);
  TaskStatus to = status_arg(a, "state", a.str("state", kMaxIdArgBytes));
  std::string reason = a.str_or("reason", "");
  a.finish();
  return service(ctx).transition(to, reason, actor);
}

json handle_memory_search(CommandContext& ctx, const json& args, const Actor&) {
  Args a("memory.search", args);
  std::string query = a.str("query", kMaxNameBytes);
  uint64_t limit = a.opt_count("limit").value_or(10);
  if (limit == 0 || limit > 1000) a.invalid("limit", "must be between 1 and 1000");
  a.finish();
  return service(ctx).memory_search(query, static_cast<size_t>(limit));
}

json handle_memory_save(CommandContext& ctx, const json& args, const Actor& actor) {
  Args a("memory.save", args);
  std::string title = a.str("title");
  std::string content = a.str("content", kMaxNoteBytes);
  auto keywords = a.str_list("keywords");
  a.finish();
  return service(ctx).memory_save(title, content, keywords, actor);
}

json handle_watch(CommandContext&, const json& args, const Actor&) {
  Args a("watch", args);
  a.finish();
  return json{{"watching", true}};
}

json handle_audit_verify(CommandContext& ctx, const json& args, const Actor&) {
  Args a("audit.verify", args);
  a.finish();
  if (!ctx.audit_verify) throw Error(Errc::kInternal, "no audit log attached");
  json result = ctx.audit_verify();
  if (result.is_object() && result.value("ok", true) == false) {
    std::string message = result.value("message", std::string("the audit hash chain is broken"));
    throw Error(Errc::kAuditBroken, message);
  }
  return result;
}

}  // namespace

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
    return error_reply(id, e.errc(), e.what());
  } catch (const memory::MemoryError& e) {
    spdlog::error("control: memory error: {}", e.what());
    return error_reply(id, Errc::kMemoryError, e.what());
  } catch (const std::exception& e) {
    spdlog::error("control: internal error: {}", e.what());
    return error_reply(id, Errc::kInternal, std::string("internal error: ") + e.what());
  } catch (...) {
    spdlog::error("control: internal error: unknown exception");
    return error_reply(id, Errc::kInternal, "internal error");
  }
}

Dispatcher::Outcome Dispatcher::handle_line(std::string_view line, const Actor& actor) noexcept {
  json id;  // null until the parser finds one
  try {
    Request req = parse_request(line, &id);
    return dispatch(req, actor);
  } catch (...) {
    try {
      return Outcome{reply_for_current_exception(id), false};
    } catch (...) {
      return Outcome{json(), false};
    }
  }
}

Dispatcher::Outcome Dispatcher::dispatch(const Request& req, const Actor& actor) noexcept {
  try {
    const Command* command = find_command(req.cmd);
    if (!command) {
      throw Error(Errc::kUnknownCommand, "unknown command '" + req.cmd + "'");
    }
    json reply = run(*command, req, actor);
    bool stream = command->streams && reply.value("ok", false);
    return Outcome{std::move(reply), stream};
  } catch (...) {
    try {
      return Outcome{reply_for_current_exception(req.id), false};
    } catch (...) {
      return Outcome{json(), false};
    }
  }
}

json Dispatcher::run(const Command& command, const Request& req, const Actor& actor) {
  auto call = [&]() -> std::pair<json, bool> {
    // Returns the reply (without id) and whether it may be remembered: refusals
    // and results are final; storage and internal failures may go away on retry.
    try {
      return {ok_reply(nullptr, command.handler(ctx_, req.args, actor)), true};
    } catch (...) {
      json reply = reply_for_current_exception(nullptr);
      auto c = errc_from_wire(reply["error"].value("code", ""));
      return {std::move(reply), c != Errc::kMemoryError && c != Errc::kInternal};
    }
  };

  if (!command.mutating || !req.idempotency_key || !memo_) {
    json reply = call().first;
    reply["id"] = req.id;
    return reply;
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
    return reply;
  }
  auto [reply, final] = call();
  if (final) {
    try {
      memo_->remember(scoped, req.cmd, fingerprint, reply);
    } catch (const std::exception& e) {
      spdlog::warn("control: could not remember idempotency key '{}': {}", key, e.what());
    }
  }
  reply["id"] = req.id;
  return reply;
}

std::string request_fingerprint(std::string_view cmd, const json& args) {
  // json objects keep their keys sorted, so dump() is canonical for equal arguments.
  std::string text(cmd);
  text.push_back('\n');
  text += args.dump(-1, ' ', true, json::error_handler_t::replace);
  return base::sha256_hex(text);
}

std::string scoped_idempotency_key(const Actor& actor, std::string_view key) {
  return std::to_string(actor.uid) + ":" + std::string(key);
}

}  // namespace leasefs::gate::control

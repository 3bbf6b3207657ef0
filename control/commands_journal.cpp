// diff and undo: the journal's commands. Arguments are checked here (types,
// bounds, unknown names) and the use cases do the rest
// (service/journal_use_cases.hpp).
#include <set>
#include <string>

#include "base/error.hpp"
#include "control/commands.hpp"
#include "service/journal_use_cases.hpp"

namespace leasefs::gate::control {

namespace {

using nlohmann::json;

constexpr size_t kMaxPaths = 64;
constexpr size_t kMaxPathBytes = 4096;
constexpr size_t kMaxReasonBytes = 16 * 1024;

[[noreturn]] void bad(const std::string& cmd, const std::string& what) {
  throw Error(Errc::kBadRequest, "command '" + cmd + "': " + what);
}

void only(const std::string& cmd, const json& args, const std::set<std::string>& known) {
  if (!args.is_object()) bad(cmd, "arguments must be an object");
  for (const auto& [key, value] : args.items()) {
    (void)value;
    if (!known.contains(key)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      bad(cmd, "takes no argument '" + key.substr(0, 64) + "' (it takes: " + list + ")");
    }
  }
}

std::optional<uint64_t> turn_arg(const std::string& cmd, const json& args) {
  auto it = args.find("turn");
  if (it == args.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
    bad(cmd, "argument 'turn' must be a non-negative integer");
  }
  return it->get<uint64_t>();
}

bool flag(const std::string& cmd, const json& args, const char* name) {
  auto it = args.find(name);
  if (it == args.end() || it->is_null()) return false;
  if (!it->is_boolean()) bad(cmd, std::string("argument '") + name + "' must be a boolean");
  return it->get<bool>();
}

std::vector<std::string> paths_arg(const std::string& cmd, const json& args) {
  auto it = args.find("paths");
  if (it == args.end() || it->is_null()) return {};
  if (!it->is_array()) bad(cmd, "argument 'paths' must be an array of strings");
  if (it->size() > kMaxPaths) {
    bad(cmd, "argument 'paths' has more than " + std::to_string(kMaxPaths) + " elements");
  }
  std::vector<std::string> out;
  for (const auto& p : *it) {
    if (!p.is_string()) bad(cmd, "argument 'paths' must be an array of strings");
    if (p.get_ref<const std::string&>().size() > kMaxPathBytes) {
      bad(cmd, "a path is longer than " + std::to_string(kMaxPathBytes) + " bytes");
    }
    out.push_back(p.get<std::string>());
  }
  return out;
}

JournalUseCases& journal(CommandContext& ctx) {
  if (!ctx.journal) {
    throw Error(Errc::kNotFound,
                "this daemon keeps no journal (mounted with --journal=off); remount without it");
  }
  return *ctx.journal;
}

}  // namespace

json handle_diff(CommandContext& ctx, const json& args, const Actor& actor) {
  only("diff", args, {"turn", "paths", "stat"});
  DiffArgs d;
  d.turn = turn_arg("diff", args);
  d.paths = paths_arg("diff", args);
  d.stat = flag("diff", args, "stat");
  return journal(ctx).diff(d, actor);
}

json handle_undo(CommandContext& ctx, const json& args, const Actor& actor) {
  only("undo", args, {"turn", "paths", "force", "dry_run", "reason"});
  UndoArgs u;
  auto turn = turn_arg("undo", args);
  if (!turn) bad("undo", "needs argument 'turn' (the turn to put back)");
  u.turn = *turn;
  u.paths = paths_arg("undo", args);
  u.force = flag("undo", args, "force");
  u.dry_run = flag("undo", args, "dry_run");
  if (auto it = args.find("reason"); it != args.end() && !it->is_null()) {
    if (!it->is_string()) bad("undo", "argument 'reason' must be a string");
    if (it->get_ref<const std::string&>().size() > kMaxReasonBytes) {
      bad("undo", "argument 'reason' is too long");
    }
    u.reason = it->get<std::string>();
  }
  return journal(ctx).undo(u, actor);
}

}  // namespace leasefs::gate::control

#include "leasectl/output.hpp"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <map>
#include <sstream>
#include <string>

#include "base/duration_text.hpp"
#include "base/inert_text.hpp"

namespace leasefs::leasectl {

using base::inert;
using base::inert_line;
using base::quote_name;
using nlohmann::json;

namespace {

std::string str(const json& j, const char* key, std::string fallback = "") {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  // Everything shown is made inert (inert_text.hpp): most of it was chosen by
  // the agent.
  if (it->is_string()) return inert(it->get_ref<const std::string&>());
  return inert(it->dump());
}

// A path or glob: quoted as git quotes names (base/inert_text.hpp).
std::string name_of(const json& j) {
  return j.is_string() ? quote_name(j.get_ref<const std::string&>()) : inert(j.dump());
}

std::string name(const json& j, const char* key) {
  return j.is_object() && j.contains(key) ? name_of(j[key]) : std::string();
}

std::string list(const json& j) {
  if (!j.is_array() || j.empty()) return "";
  std::string out;
  for (const auto& item : j) {
    if (!out.empty()) out += ",";
    out += name_of(item);
  }
  return out;
}

// What a grant covers, or will: no path named is the whole tree, at every depth.
std::string scope(const json& paths) {
  std::string named = list(paths);
  return named.empty() ? "**" : named;
}

void print_lines(std::FILE* out, std::string_view text, std::string (*render)(std::string_view)) {
  if (!text.empty()) std::fprintf(out, "%s\n", render_lines(text, render).c_str());
}

// Local date and time of an event's ts_ms (now when it has none).
std::string when(const json& e) {
  int64_t ms = 0;
  if (e.contains("ts_ms") && e["ts_ms"].is_number_integer()) {
    ms = e["ts_ms"].get<int64_t>();
  } else {
    ms = static_cast<int64_t>(std::time(nullptr)) * 1000;
  }
  time_t secs = static_cast<time_t>(ms / 1000);
  struct tm tm {};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string grant_line(const json& g) {
  std::string line = str(g, "id") + "  turn " + str(g, "turn");
  line += "  paths " + scope(g.value("paths", json::array()));
  std::string ops = list(g.value("ops", json::array()));
  if (!ops.empty()) line += "  ops " + ops;
  if (g.contains("expires_ms") && g["expires_ms"].is_number()) {
    const int64_t left =
        g["expires_ms"].get<int64_t>() - static_cast<int64_t>(std::time(nullptr)) * 1000;
    line += "  expires in " + base::duration_text(left);
  }
  line += "  \"" + str(g, "reason") + "\"";
  return line;
}

// What a path-narrowed grant with the write class allows beside its paths
// (gate/temp_sibling.hpp), said where a person reads the grant; "" otherwise.
std::string beside_line(const json& g) {
  const json paths = g.value("paths", json::array());
  const json ops = g.value("ops", json::array());
  const bool writes = ops.empty() || std::find(ops.begin(), ops.end(), json("write")) != ops.end();
  if (paths.empty() || !writes) return {};
  return "  beside these paths, temporary files (sed -i, an editor's save) may be written and "
         "renamed onto a granted file, never run; one left when the lease ends goes into the "
         "journal";
}

// Who asked: uid, pid and command line (the command is the process's own text,
// shown inert and quoted).
std::string asked_by(const json& r) {
  std::string who = "by uid " + str(r, "requester_uid", "?");
  if (r.contains("requester_pid")) {
    who += " pid " + str(r, "requester_pid") + " \"" + str(r, "requester_command") + "\"";
  }
  return who;
}

std::string request_line(const json& r) {
  return str(r, "id") + "  " + str(r, "state", "pending") + "  turn " + str(r, "turn") +
         "  paths " + scope(r.value("paths", json::array())) + "  \"" + str(r, "reason") + "\"  " +
         asked_by(r);
}

void print_hits(std::FILE* out, const json& hits, const Style& st) {
  if (!hits.is_array() || hits.empty()) {
    std::fprintf(out, "%s\n", st.dim("(no memories found)").c_str());
    return;
  }
  for (const auto& h : hits) {
    std::fprintf(out, "  %s  %-10s %s\n", st.bold(str(h, "id")).c_str(), str(h, "type").c_str(),
                 str(h, "title").c_str());
  }
}

void print_task(std::FILE* out, const json& task, const Style& st) {
  if (!task.is_object()) {
    std::fprintf(out, "%-10s %s\n", "task", st.dim("(none)").c_str());
    return;
  }
  std::fprintf(out, "%-10s %s  %s\n", "task", st.bold(str(task, "task_id")).c_str(),
               str(task, "description").c_str());
  std::string status = str(task, "status");
  std::string shown = status == "in_progress" ? st.green(status) : st.yellow(status);
  std::fprintf(out, "%-10s %s\n", "status", shown.c_str());
  if (!str(task, "done_when").empty()) {
    std::fprintf(out, "%-10s %s\n", "done when", str(task, "done_when").c_str());
  }
  if (!str(task, "next_step").empty()) {
    std::fprintf(out, "%-10s %s\n", "next", str(task, "next_step").c_str());
  }
}

void print_requests(std::FILE* out, const json& pending, const char* indent, const Style& st) {
  for (const auto& q : pending) {
    // A request in ask mode has an operation parked on it: someone is waiting.
    const std::string waiting = q.value("ask", false) ? st.yellow(" [ask mode]") : "";
    std::fprintf(out, "%s%s%s\n", indent, request_line(q).c_str(), waiting.c_str());
  }
}

// When and in which turn, then what: a refusal of an earlier turn reads so.
void print_refusal(std::FILE* out, const json& f) {
  std::fprintf(out, "  %s  turn %s  %s %s  (%s, pid %s %s)\n", when(f).c_str(),
               str(f, "turn", "?").c_str(), str(f, "op").c_str(), name(f, "path").c_str(),
               str(f, "reason").c_str(), str(f, "pid").c_str(), str(f, "process").c_str());
}

// The central policy in force: its version and each rule, by its source.
void print_policy_lines(std::FILE* out, const json& p) {
  if (!p.is_object() || str(p, "version").empty()) return;
  const json rules = p.value("rules", json::array());
  std::fprintf(out, "%-10s version %s, %zu rule(s) in force\n", "policy", str(p, "version").c_str(),
               rules.size());
  for (const json& rule : rules) {
    json shown = rule;
    for (const char* k : {"id", "source", "owner", "scope", "expires_ms"}) shown.erase(k);
    const std::string owner = str(rule, "owner");
    std::fprintf(out, "  %s %s%s\n", str(rule, "source").c_str(), inert(shown.dump()).c_str(),
                 owner.empty() ? "" : (" (owner " + owner + ")").c_str());
  }
  if (p.contains("error")) std::fprintf(out, "  %s\n", str(p, "error").c_str());
}

void print_status(std::FILE* out, const json& r, const Style& st) {
  print_task(out, r.value("task", json()), st);
  std::fprintf(out, "%-10s %s\n", "turn", str(r, "turn").c_str());
  std::string mode = str(r, "access_mode", "read_only");
  std::fprintf(out, "%-10s %s\n", "access",
               (mode == "leased" ? st.green(mode) : st.yellow(mode)).c_str());
  // A mount no approver made over the tree: no lease until it is gone.
  for (const auto& m : r.value("foreign_mounts", json::array())) {
    std::fprintf(out, "%-10s %s\n", "warning",
                 st.red("foreign mount at " + str(m, "mount_point") + " (" + str(m, "fstype") +
                        ", mounted by uid " + str(m, "uid") +
                        "): every grant was revoked and none is issued until it is gone")
                     .c_str());
  }
  // What a fleet bridge last said about the centre, in its own (inert) words.
  if (const json f = r.value("fleet", json()); f.is_object()) {
    const bool up = str(f, "centre") == "reachable";
    const std::string line = "centre " + str(f, "centre") + " (bridge uid " + str(f, "bridge_uid") +
                             ": " + str(f, "detail") + ")" +
                             (up ? "" : "; a local approver still decides");
    std::fprintf(out, "%-10s %s\n", "fleet", (up ? st.green(line) : st.red(line)).c_str());
  }
  print_policy_lines(out, r.value("policy", json()));
  const json grants = r.value("grants", json::array());
  std::fprintf(out, "%-10s %zu\n", "grants", grants.size());
  for (const auto& g : grants) std::fprintf(out, "  %s\n", grant_line(g).c_str());
  const json pending = r.value("pending_requests", json::array());
  std::fprintf(out, "%-10s %zu\n", "requests", pending.size());
  print_requests(out, pending, "  ", st);
  if (const json a = r.value("ask", json()); a.is_object()) {
    std::fprintf(out, "%-10s %s\n", "ask",
                 a.value("on", false)
                     ? ("on, " + base::duration_text(a.value("timeout_ms", int64_t{0})) +
                        " (set by the " + str(a, "set_by") + ")")
                           .c_str()
                     : "off");
  }
  if (r.value("pending_checkpoint", false)) {
    std::fprintf(out, "%-10s %s\n", "pending",
                 st.red("a checkpoint is waiting: `leasectl checkpoint --retry-pending`").c_str());
  }
  std::fprintf(out, "%-10s %s\n", "memories", str(r, "memory_records", "0").c_str());
  const json j = r.value("journal", json());
  const uint64_t older = j.is_object() ? j.value("older_turns_bytes", uint64_t{0}) : 0;
  if (const json d = r.value("disk", json()); d.is_object() && d.value("full", false)) {
    std::fprintf(out, "%-10s %s\n", "disk",
                 st.red("full: writes that take space get ENOSPC until space is freed").c_str());
    if (older > 0) {
      std::fprintf(out,
                   "%-10s the journal of older turns holds %s MiB: `leasectl journal prune` "
                   "frees it (those turns can then no longer be undone)\n",
                   "", std::to_string(older >> 20).c_str());
    }
  }
  if (j.is_object()) {
    const json bad = j.value("not_undoable", json::array());
    std::fprintf(out, "%-10s %s\n", "journal",
                 j.value("enabled", false) ? ("on, " + str(j, "bytes", "0") + " bytes this turn, " +
                                              std::to_string(older) + " bytes older turns")
                                                 .c_str()
                                           : "off");
    for (const auto& p : bad) {
      std::fprintf(out, "  %s %s\n", st.red("not undoable").c_str(), name_of(p).c_str());
    }
  }
  if (r.contains("protected_paths")) {
    // Paths only a grant that names them opens (`leasefs mount --protect`).
    std::fprintf(out, "%-10s %s\n", "protected", list(r["protected_paths"]).c_str());
  }
  if (const json h = r.value("signed_heads", json()); h.is_object()) {
    // Whether each turn's audit head is signed (`leasectl audit verify --key` checks them).
    if (h.value("signed", false)) {
      std::fprintf(out, "%-10s signed at each turn's end (%s this run), verifier key %s\n", "heads",
                   str(h, "heads_signed", "0").c_str(), str(h, "verifier_key").c_str());
    } else {
      std::fprintf(out, "%-10s %s\n", "heads", st.red(str(h, "why_unsigned")).c_str());
    }
  }
  const json refusals = r.value("recent_refusals", json::array());
  if (!refusals.empty()) {
    // The total, and how many of the last ones follow.
    const std::string total = str(r, "refusals_total", std::to_string(refusals.size()));
    std::fprintf(out, "%-10s %s (the last %zu:)\n", "refusals", total.c_str(), refusals.size());
    for (const auto& f : refusals) print_refusal(out, f);
  }
}

// One printer per command of protocol/command_list.def, print_<id>, as the
// server has one handler, handle_<id>: a command without one does not build.

void print_start(std::FILE* out, const json& r, const Style& st) {
  print_task(out, r.value("task", json()), st);
  if (r.contains("turn")) std::fprintf(out, "%-10s %s\n", "turn", str(r, "turn").c_str());
  const json cp = r.value("checkpoint", json());
  if (cp.is_object() && cp.contains("text") && cp["text"].is_string()) {
    // Several lines by design: real lines, each shown inert.
    std::fprintf(out, "\n");
    print_lines(out, cp["text"].get_ref<const std::string&>(), inert);
  }
  std::fprintf(out, "\n%s\n", st.bold("from memory:").c_str());
  print_hits(out, r.value("memories", json::array()), st);
}

void print_resume(std::FILE* out, const json& r, const Style& st) {
  json shown = r;
  if (json& cp = shown["checkpoint"]; cp.is_object() && !cp.value("closing", "").empty()) {
    // The checkpoint's closing advice ("Resume with ...") is done by now.
    cp["text"] = cp.value("notes", "") +
                 "Resumed: writes stay closed until a person grants a lease for this turn.\n" +
                 cp.value("marker", "");
  }
  print_start(out, shown, st);
}

void print_turn(std::FILE* out, const json& r, const Style&) {
  std::fprintf(out, "turn %s; revoked %s grant(s); %s\n", str(r, "turn").c_str(),
               str(r, "revoked", "0").c_str(), str(r, "access_mode", "read_only").c_str());
}

void print_end_turn(std::FILE* out, const json& r, const Style& st) {
  print_turn(out, r, st);
}

void print_grant(std::FILE* out, const json& r, const Style& st) {
  const json g = r.value("grant", json::object());
  std::fprintf(out, "%s %s\n", st.green("granted").c_str(), grant_line(g).c_str());
  if (const std::string beside = beside_line(g); !beside.empty()) {
    std::fprintf(out, "%s\n", beside.c_str());
  }
}

void print_revoke(std::FILE* out, const json& r, const Style&) {
  std::fprintf(out, "revoked %s grant(s); %s\n", str(r, "revoked", "0").c_str(),
               str(r, "access_mode", "read_only").c_str());
}

void print_request(std::FILE* out, const json& r, const Style&) {
  std::fprintf(out, "requested %s\n", request_line(r.value("request", json::object())).c_str());
  if (r.contains("grant"))
    std::fprintf(out, "-> %s\n", grant_line(r.value("grant", json::object())).c_str());
  if (r.contains("hint")) std::fprintf(out, "%s\n", str(r, "hint").c_str());
}

void print_approve(std::FILE* out, const json& r, const Style& st) {
  const json q = r.value("request", json::object());
  std::fprintf(out, "%s %s (asked %s) -> %s\n", st.green("approved").c_str(), str(q, "id").c_str(),
               asked_by(q).c_str(), grant_line(r.value("grant", json::object())).c_str());
}

void print_reject(std::FILE* out, const json& r, const Style&) {
  const json q = r.value("request", json::object());
  std::fprintf(out, "rejected %s (asked %s)\n", str(q, "id").c_str(), asked_by(q).c_str());
}

void print_ask(std::FILE* out, const json& r, const Style&) {
  const json a = r.value("ask", json::object());
  std::fprintf(out, "ask mode %s\n",
               a.value("on", false)
                   ? ("on: a refused write waits " +
                      base::duration_text(a.value("timeout_ms", int64_t{0})) + " for a person")
                         .c_str()
                   : "off: a refused write fails at once");
}

void print_checkpoint(std::FILE* out, const json& r, const Style&) {
  // The checkpoint text is several lines by design: real lines, each shown inert.
  if (r.contains("text") && r["text"].is_string() &&
      !r["text"].get_ref<const std::string&>().empty()) {
    print_lines(out, r["text"].get_ref<const std::string&>(), inert);
  } else {
    std::fprintf(out, "%s\n", inert(r.dump(2)).c_str());
  }
}

void print_transition(std::FILE* out, const json& r, const Style& st) {
  std::fprintf(out, "%s -> %s\n", str(r, "from").c_str(), st.bold(str(r, "to")).c_str());
}

void print_memory_search(std::FILE* out, const json& r, const Style& st) {
  print_hits(out, r.value("hits", json::array()), st);
}

void print_memory_save(std::FILE* out, const json& r, const Style& st) {
  std::fprintf(out, "saved %s  %s\n", st.bold(str(r, "id")).c_str(), str(r, "title").c_str());
}

// One event of the stream.
void print_watch(std::FILE* out, const json& event, const Style& st) {
  std::fprintf(out, "%s\n", format_event(event, st).c_str());
}

void print_diff(std::FILE* out, const json& r, const Style&) {
  // The daemon quotes every name in the text (journal/diff.hpp); a line of
  // contents holding what a terminal would act on is shown inert.
  const std::string text = r.value("text", std::string());
  print_lines(out, text, inert_line);
  if (text.empty()) std::fprintf(out, "turn %s: no changes\n", str(r, "turn").c_str());
}

void print_undo(std::FILE* out, const json& r, const Style& st) {
  const bool applied = r.value("applied", false);
  std::fprintf(out, "%s turn %s: %zu restored, %zu removed\n",
               applied ? st.green("undid").c_str() : "would undo", str(r, "turn").c_str(),
               r.value("restored", json::array()).size(), r.value("removed", json::array()).size());
  for (const auto& p : r.value("restored", json::array())) {
    std::fprintf(out, "  restored %s\n", name_of(p).c_str());
  }
  for (const auto& p : r.value("removed", json::array())) {
    std::fprintf(out, "  removed  %s\n", name_of(p).c_str());
  }
  for (const auto& p : r.value("not_undoable", json::array())) {
    std::fprintf(out, "  not undoable %s (%s)\n", name(p, "path").c_str(), str(p, "why").c_str());
  }
  if (applied && r.value("can_be_undone", false)) {
    std::fprintf(out, "journaled in turn %s: `leasectl undo --turn %s` puts it back\n",
                 str(r, "journaled_in_turn").c_str(), str(r, "journaled_in_turn").c_str());
  }
  // The daemon's words, the same for a dry run as for the undo itself.
  if (const std::string warning = r.value("warning", std::string()); !warning.empty()) {
    std::fprintf(out, "%s %s\n", st.red("warning:").c_str(), inert(warning).c_str());
  }
}

void print_audit_show(std::FILE* out, const json& r, const Style& st) {
  // One line a record, as watch shows it: what the agent chose (names, commands)
  // through the inert renderer.
  const json records = r.value("records", json::array());
  if (const size_t left_out = r.value("left_out", size_t{0}); left_out > 0) {
    std::fprintf(out, "(%zu earlier records are not shown)\n", left_out);
  }
  for (const auto& e : records) print_watch(out, e, st);
  if (records.empty()) std::fprintf(out, "no audit record matches\n");
}

void print_audit_records(std::FILE* out, const json& r, const Style&) {
  // The exact lines, one a line, as the log holds them (JSON: inert already).
  for (const auto& rec : r.value("records", json::array())) {
    std::fprintf(out, "%s\n", inert(rec.value("line", std::string())).c_str());
  }
}

void print_audit_heads(std::FILE* out, const json& r, const Style&) {
  // Each checkpoint line by line as the file holds it (each line made inert; the
  // root path in its origin is the agent's choice), after one naming its size.
  for (const auto& h : r.value("heads", json::array())) {
    std::fprintf(out, "size %s  root %s\n", str(h, "size").c_str(), str(h, "root_hash").c_str());
    std::istringstream lines(h.value("checkpoint", std::string()));
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) {
        std::fprintf(out, "\n");
      } else {
        std::fprintf(out, "  %s\n", inert(line).c_str());
      }
    }
  }
  if (r.value("heads", json::array()).empty()) {
    std::fprintf(out, "no signed head after that size\n");
  }
  if (const std::string damaged = r.value("damaged", std::string()); !damaged.empty()) {
    std::fprintf(out, "the signed heads file is damaged at %s\n", inert(damaged).c_str());
  }
  if (r.value("more", false)) std::fprintf(out, "(more: ask again with --after-size)\n");
}

void print_fleet_report(std::FILE* out, const json& r, const Style&) {
  std::fprintf(out, "recorded: centre %s\n", str(r, "centre").c_str());
}

void print_policy_apply(std::FILE* out, const json& r, const Style&) {
  print_policy_lines(out, r);
  if (str(r, "version").empty()) std::fprintf(out, "no central policy\n");
}

void print_audit_verify(std::FILE* out, const json& r, const Style& st) {
  std::fprintf(out, "%s: %s records\n", st.green("audit chain intact").c_str(),
               str(r, "records", "0").c_str());
  const json heads = r.value("signed_heads", json::object());
  if (heads.value("checked", false)) {
    std::fprintf(out, "%s: %s, the last at size %s, against the key %s\n",
                 st.green("signed heads verified").c_str(), str(heads, "heads", "0").c_str(),
                 str(heads, "last_size", "0").c_str(), str(heads, "key").c_str());
  } else if (heads.is_object() && !heads.empty()) {
    std::fprintf(out,
                 "signed heads not checked: %s in .longrun/signed_heads; give --key to check "
                 "them\n",
                 str(heads, "entries", "0").c_str());
  }
}

// The views of status that leasectl offers as commands of their own.
void print_requests_view(std::FILE* out, const json& r, const Style& st) {
  const json pending = r.value("pending_requests", json::array());
  if (pending.empty()) std::fprintf(out, "no request waits for an answer\n");
  print_requests(out, pending, "", st);
}

void print_grants_view(std::FILE* out, const json& r, const Style&) {
  const json grants = r.value("grants", json::array());
  if (grants.empty()) {
    std::fprintf(out, "no grant in force in turn %s: the tree is read-only\n",
                 str(r, "turn").c_str());
  }
  for (const auto& g : grants) {
    std::fprintf(out, "%s\n", grant_line(g).c_str());
    if (const std::string beside = beside_line(g); !beside.empty()) {
      std::fprintf(out, "%s\n", beside.c_str());
    }
  }
}

void print_journal_prune(std::FILE* out, const json& r, const Style& st) {
  const bool dry = r.value("dry_run", false);
  const json pruned = r.value("pruned", json::array());
  if (pruned.empty()) {
    std::fprintf(out, "no turn before turn %s has a journal: nothing to delete\n",
                 str(r, "turn").c_str());
    return;
  }
  std::fprintf(out, "%s the journal of %zu turns: %s MiB\n",
               dry ? "would delete" : st.green("deleted").c_str(), pruned.size(),
               std::to_string(r.value("bytes", uint64_t{0}) >> 20).c_str());
  for (const auto& p : pruned) {
    const json paths = p.value("not_undoable_now", json::array());
    std::fprintf(out, "  turn %s (%s KiB): %zu paths can no longer be undone\n",
                 str(p, "turn").c_str(),
                 std::to_string(p.value("bytes", uint64_t{0}) >> 10).c_str(), paths.size());
    size_t shown = 0;
    for (const auto& path : paths) {
      if (++shown > 10) {
        std::fprintf(out, "    ... and %zu more\n", paths.size() - 10);
        break;
      }
      std::fprintf(out, "    %s\n", name_of(path).c_str());
    }
  }
}

void print_refusals_mark(std::FILE* out, const json& r, const Style&) {
  std::fprintf(out, "marked %s\n", str(r, "marked").c_str());
}

void print_refusals_since(std::FILE* out, const json& r, const Style& st) {
  const bool whole_turn = str(r, "window") == "turn";
  const json refusals = r.value("refusals", json::array());
  const uint64_t left_out = r.value("left_out", uint64_t{0});
  if (refusals.empty() && left_out == 0) {
    std::fprintf(out, "%s\n",
                 st.dim(whole_turn ? "(no refusals in turn " + str(r, "turn") + ")"
                                   : std::string("(no refusals since that call began)"))
                     .c_str());
    return;
  }
  std::fprintf(
      out, "%s:\n",
      whole_turn ? ("refused in turn " + str(r, "turn")).c_str() : "refused since that call began");
  for (const auto& f : refusals) print_refusal(out, f);
  if (left_out > 0) std::fprintf(out, "  ... and %s more\n", std::to_string(left_out).c_str());
}

using Printer = void (*)(std::FILE*, const json&, const Style&);

const std::map<std::string_view, Printer>& printers() {
  static const std::map<std::string_view, Printer> table{
#define LEASEFS_COMMAND(id, name, mutating, streams, summary) {name, &print_##id},
#include "protocol/command_list.def"
#undef LEASEFS_COMMAND
      {"requests", &print_requests_view},
      {"grants", &print_grants_view},
  };
  return table;
}

}  // namespace

std::string render_lines(std::string_view text, std::string (*render)(std::string_view)) {
  std::string shown;
  for (size_t start = 0; start < text.size() || start == 0;) {
    const size_t nl = text.find('\n', start);
    if (start > 0) shown += "\n";
    shown += render(text.substr(start, nl == std::string_view::npos ? nl : nl - start));
    if (nl == std::string_view::npos || nl + 1 == text.size()) break;
    start = nl + 1;
  }
  return shown;
}

void print_result(std::FILE* out, std::string_view cmd, const json& r, const Style& st) {
  const auto& table = printers();
  if (auto it = table.find(cmd); it != table.end()) {
    it->second(out, r, st);
  } else {
    std::fprintf(out, "%s\n", inert(r.dump(2)).c_str());
  }
}

std::string format_event(const json& e, const Style& st) {
  // One line per event: local date and time, the type in a fixed column, then
  // key=value pairs, every value inert and every name quoted (a newline in a
  // name never starts a line).
  std::string line = st.dim(when(e)) + " ";
  std::string type = str(e, "type", "event");
  std::string padded = type.size() < 16 ? type + std::string(16 - type.size(), ' ') : type;
  line +=
      (type == "refusal" || type == "budget_refused" || type == "foreign_mount" ? st.red(padded)
                                                                                : st.bold(padded));
  for (const auto& [key, value] : e.items()) {
    if (key == "type" || key == "ts_ms" || key == "seq") continue;
    const bool is_name = key == "path" || key == "to" || key == "target";
    line += " " + inert(key) + "=" +
            (value.is_string() ? (is_name ? quote_name(value.get_ref<const std::string&>())
                                          : inert(value.get_ref<const std::string&>()))
             : key == "paths"  ? list(value)
                               : inert(value.dump(-1, ' ', false, json::error_handler_t::replace)));
  }
  return line;
}

}  // namespace leasefs::leasectl

#include "leasectl/command_line.hpp"

#include <sys/stat.h>

#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "gate/op.hpp"
#include "gate/task_status.hpp"
#include "protocol/arg_text.hpp"
#include "protocol/command_options.hpp"
#include "protocol/command_registry.hpp"

namespace leasefs::leasectl {

namespace {

using nlohmann::json;
using protocol::ArgCheck;
using protocol::ArgKind;
using protocol::CommandOptions;
using protocol::OptionSpec;

// What one option holds once parsed; the member its kind uses.
struct Value {
  std::string text;
  std::vector<std::string> texts;
  bool flag = false;
  std::optional<uint64_t> number;
};

std::string status_names() {
  std::string names;
  for (auto st : gate::kAllStatuses) {
    names += (names.empty() ? "" : ", ") + std::string(gate::to_string(st));
  }
  return names;
}

// --since: a duration back from now (10m, 2h, 1d) or a local date, with a time
// or not (2026-12-06, 2026-12-06 14:30, 2026-12-06 14:30:05).
std::optional<int64_t> parse_since_ms(const std::string& text) {
  if (text.find_first_not_of("0123456789 ") != std::string::npos) {
    if (auto ms = protocol::parse_duration_ms(text); ms && *ms >= 0) {
      return static_cast<int64_t>(std::time(nullptr)) * 1000 - *ms;
    }
  }
  for (const char* format : {"%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"}) {
    struct tm tm {};
    const char* end = ::strptime(text.c_str(), format, &tm);
    if (end && *end == '\0') {
      tm.tm_isdst = -1;
      return static_cast<int64_t>(std::mktime(&tm)) * 1000;
    }
  }
  return std::nullopt;
}

void check_duration(const std::string& name, const std::string& text) {
  // A bare number is refused here: is "10" ten seconds or ten minutes?
  if (text.find_first_not_of("0123456789 ") == std::string::npos) {
    throw CLI::ValidationError(
        name, "'" + text + "' has no unit: write 10s, 10m or 10h (units: ms, s, m, h, d)");
  }
  auto ms = protocol::parse_duration_ms(text);
  if (!ms || *ms <= 0) {
    throw CLI::ValidationError(name, "'" + text +
                                         "' is not a duration (a positive number with ms, s, m, "
                                         "h or d, e.g. 30s, 10m, 2h)");
  }
}

// --key: the key's text, read from the file it names if it names one (the
// first line; a verifier key is public, so any file will do).
std::string verifier_key_text(const std::string& name, const std::string& text) {
  struct stat st {};
  if (::stat(text.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return text;
  std::ifstream in(text);
  std::string line;
  if (!in || !std::getline(in, line) || line.empty()) {
    throw CLI::ValidationError(name, "the file " + text + " holds no verifier key");
  }
  return line;
}

// The value to send for a text option, once its check passes.
json checked_text(const OptionSpec& spec, const std::string& text) {
  const std::string name(spec.name);
  switch (spec.check) {
    case ArgCheck::kNone:
      break;
    case ArgCheck::kOpClasses:
      if (auto problem = gate::op_classes_problem(protocol::split_csv(text))) {
        throw CLI::ValidationError(name, *problem);
      }
      break;
    case ArgCheck::kDuration:
      check_duration(name, text);
      break;
    case ArgCheck::kTaskStatus:
      if (!gate::parse_status(text)) {
        throw CLI::ValidationError(
            name, "'" + text + "' is not a task status (one of: " + status_names() + ")");
      }
      break;
    case ArgCheck::kVerifierKey:
      return verifier_key_text(name, text);
    case ArgCheck::kSince:
      if (auto ms = parse_since_ms(text)) return *ms;
      throw CLI::ValidationError(name, "'" + text +
                                           "' is neither a duration (10m, 2h, 1d) nor a date "
                                           "(2026-12-06, 2026-12-06 14:30)");
  }
  return text;
}

// Sets what `value` says into `out` (args or local), as the option's kind sends it.
void put(const OptionSpec& spec, const Value& value, json& out) {
  const std::string arg(spec.arg);
  switch (spec.kind) {
    case ArgKind::kText:
      if (spec.required || !value.text.empty()) out[arg] = checked_text(spec, value.text);
      break;
    case ArgKind::kTexts:
      if (!value.texts.empty()) out[arg] = value.texts;
      break;
    case ArgKind::kFlag:
      if (value.flag) out[arg] = true;
      break;
    case ArgKind::kNumber:
      if (value.number) {
        out[arg] = *value.number;
      } else if (spec.fallback) {
        out[arg] = *spec.fallback;
      }
      break;
  }
}

// Options required unless a flag is set (checkpoint: unless --retry-pending).
void check_required_unless(const CommandOptions& d, const std::vector<Value>& values) {
  std::string names;
  bool missing = false;
  for (size_t i = 0; i < d.options.size(); ++i) {
    const OptionSpec& spec = d.options[i];
    if (spec.required_unless.empty()) continue;
    names += (names.empty() ? "" : " and ") + std::string(spec.name);
    bool excused = false;
    for (size_t j = 0; j < d.options.size(); ++j) {
      if (d.options[j].arg == spec.required_unless) excused = values[j].flag;
    }
    missing = missing || (!excused && values[i].text.empty());
  }
  if (missing) throw CLI::ValidationError(std::string(d.command), names + " are required");
}

Call to_call(const CommandOptions& d, const std::vector<Value>& values) {
  check_required_unless(d, values);
  Call call{std::string(d.command)};
  for (size_t i = 0; i < d.options.size(); ++i) {
    put(d.options[i], values[i], d.options[i].local ? call.local : call.args);
  }
  return call;
}

void add_option(CLI::App* sub, const OptionSpec& spec, Value& value) {
  const std::string name(spec.name);
  std::string help(spec.help);
  if (spec.check == ArgCheck::kTaskStatus) help += " " + status_names();
  CLI::Option* opt = nullptr;
  switch (spec.kind) {
    case ArgKind::kText:
      opt = sub->add_option(name, value.text, help);
      break;
    case ArgKind::kTexts:
      opt = sub->add_option(name, value.texts, help);
      if (spec.delimiter) opt->delimiter(spec.delimiter);
      break;
    case ArgKind::kFlag:
      opt = sub->add_flag(name, value.flag, help);
      break;
    case ArgKind::kNumber:
      opt = sub->add_option(name, value.number, help);
      if (spec.max > 0) opt->check(CLI::Range(spec.min, spec.max));
      break;
  }
  if (spec.required) opt->required();
  if (!spec.choices.empty()) {
    opt->check(CLI::IsMember(std::vector<std::string>(spec.choices.begin(), spec.choices.end())));
  }
}

// The subcommand for `words` ("memory", "search"), its groups made on the way.
CLI::App* add_subcommand(CLI::App& app, std::map<std::string, CLI::App*>& groups,
                         const std::vector<std::string>& words, std::string_view summary) {
  static const std::map<std::string, std::string> group_help{
      {"memory", "search or add to the project memory"}, {"audit", "the audit log"}};
  CLI::App* parent = &app;
  std::string path;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    path += words[i] + " ";
    CLI::App*& group = groups[path];
    if (!group) {
      auto help = group_help.find(words[i]);
      group = parent->add_subcommand(words[i], help == group_help.end() ? "" : help->second);
      group->require_subcommand(1);
    }
    parent = group;
  }
  return parent->add_subcommand(words.back(), std::string(summary));
}

}  // namespace

void add_protocol_commands(CLI::App& app, Call& call) {
  std::map<std::string, CLI::App*> groups;
  for (const auto& spec : protocol::command_registry()) {
    CLI::App* sub = add_subcommand(app, groups, protocol::cli_words(spec.name), spec.summary);
    const CommandOptions& d = protocol::command_options(spec.name);
    // --json is leasectl's own option, so a subcommand's help would not show it.
    std::string footer = d.details.empty() ? "" : std::string(d.details) + "\n";
    sub->footer(footer +
                "--json (before or after the command): the daemon's reply as one JSON object");
    auto values = std::make_shared<std::vector<Value>>(d.options.size());
    for (size_t i = 0; i < d.options.size(); ++i) add_option(sub, d.options[i], (*values)[i]);
    sub->callback([&call, &d, values, name = spec.name] {
      call = to_call(d, *values);
      call.cmd = std::string(name);
    });
  }
}

}  // namespace leasefs::leasectl

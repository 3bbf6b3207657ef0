// Each command's arguments as its clients take them: one descriptor per command
// of protocol/command_list.def. leasectl builds its subcommand's options from it
// and the MCP server its tools' input schemas, so an argument is named, typed and
// described once. The server's handlers (control/) check what actually arrives.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace leasefs::protocol {

enum class ArgKind : uint8_t {
  kText,    // a string; sent when given and not empty (a required one always)
  kTexts,   // a repeatable string; sent as an array when given
  kFlag,    // sent as true when set
  kNumber,  // an unsigned integer; sent when given, or its `fallback`
};

// What leasectl checks before sending, with the daemon's own parsers.
enum class ArgCheck : uint8_t {
  kNone,
  kOpClasses,    // write,create,...: gate::op_classes_problem
  kDuration,     // a positive duration with a unit
  kTaskStatus,   // a task status (gate::parse_status); the help lists them
  kSince,        // a duration back from now or a local date: sent as since_ms
  kVerifierKey,  // a verifier key, or a file holding one: sent as the key's text
};

struct OptionSpec {
  std::string_view name;  // "--reason", or "REASON" for a positional
  std::string_view arg;   // the request argument it fills; empty: the client's own
  std::string_view help;
  ArgKind kind = ArgKind::kText;
  bool required = false;
  // Required unless this flag (another option's arg) is set.
  std::string_view required_unless;
  ArgCheck check = ArgCheck::kNone;
  std::vector<std::string_view> choices;  // the only values taken, if any
  char delimiter = '\0';                  // kTexts: also split on this
  bool local = false;                     // the client's own: never sent
  int64_t min = 0, max = 0;               // kNumber: a range, when max > 0
  std::optional<int64_t> fallback;
  // The MCP server offers the argument with this description (may be empty);
  // nullopt: not offered there. `mcp_max`: the MCP tool's own upper bound.
  std::optional<std::string_view> mcp;
  int64_t mcp_max = 0;
};

struct CommandOptions {
  std::string_view command;  // the wire name
  std::string_view details;  // more help, under the summary in `--help`
  std::vector<OptionSpec> options;
};

// The descriptor of `command` (a wire name); one with no options if it takes none.
const CommandOptions& command_options(std::string_view command);

}  // namespace leasefs::protocol

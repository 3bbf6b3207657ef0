// The protocol's commands, from protocol/command_list.def: the parser accepts
// exactly these, the server binds one handler to each, and leasectl offers each
// as a subcommand ("memory.search" as `leasectl memory search`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace leasefs::protocol {

struct CommandSpec {
  std::string_view name;
  bool mutating = false;  // honours an idempotency key
  bool streams = false;   // the reply is followed by a stream of events
  std::string_view summary;
};

const std::vector<CommandSpec>& command_registry();
const CommandSpec* find_command_spec(std::string_view name) noexcept;
// "memory.search" -> {"memory", "search"}: the words leasectl parses.
std::vector<std::string> cli_words(std::string_view name);

}  // namespace leasefs::protocol

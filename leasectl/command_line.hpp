// leasectl's subcommands for the protocol's commands, built from the registry
// (protocol/command_list.def) and each command's descriptor
// (protocol/command_options.hpp): no command is wired by hand.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace leasefs::leasectl {

// What to send, once the command line is understood.
struct Call {
  std::string cmd;
  nlohmann::json args = nlohmann::json::object();
  nlohmann::json local = nlohmann::json::object();  // the options not sent (watch --type)
  // `requests` and `grants`: status, printed by this view, narrowed to this member.
  std::string view;
  std::string member;
};

// One subcommand per protocol command ("memory.search" is `leasectl memory
// search`); the one that runs fills `call`, after checking its values with the
// daemon's own parsers (a bad one is a usage error, exit 2).
void add_protocol_commands(CLI::App& app, Call& call);

}  // namespace leasefs::leasectl

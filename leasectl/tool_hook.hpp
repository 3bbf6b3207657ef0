// `leasectl --hook refusals mark|since`: an agent host's tool hooks. Before a
// tool call (PreToolUse) the daemon marks where it begins; after it
// (PostToolUse, and Claude Code's PostToolUseFailure) the refusals noted since
// go back to the model as the host's `additionalContext`, with how to ask for a
// lease. Nothing new: nothing printed. Neither step ever fails or blocks the
// tool call: exit 0 always, bounded by a short timeout; a daemon that does not
// answer is said in one line to the person (`systemMessage`) and to the model.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace leasefs::leasectl {

// Sends one command to the daemon and returns its reply; throws
// protocol::NoDaemon (or UntrustedDaemon) when none answers.
using CallDaemon =
    std::function<nlohmann::json(const std::string& cmd, const nlohmann::json& args)>;

// How long a tool hook waits for the daemon, all told.
constexpr int kToolHookTimeoutMs = 5000;

// `input` is the host's hook input (JSON on stdin); `cmd` refusals.mark or
// refusals.since. Prints the host's JSON on stdout when there is something to
// say; returns the exit code (0).
int run_tool_hook(const std::string& cmd, const nlohmann::json& input, const CallDaemon& call);

// The text the model reads for a refusals.since reply; "" when nothing is new.
std::string refusals_for_model(const nlohmann::json& since);

}  // namespace leasefs::leasectl

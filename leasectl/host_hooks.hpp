// `leasectl hooks claude-code|codex [--install [--project DIR]]`: the agent host
// settings that drive turns (a new turn on each prompt, end-turn on stop) and
// fail closed, and the tool hooks that hand each tool call's refusals back to the
// model (leasectl/tool_hook.hpp), printed or merged into the project's settings
// file.
#pragma once

#include <string>

namespace leasefs::leasectl {

// Prints the settings JSON (and, on a terminal, where to put it). Returns 0.
int print_hooks(const std::string& host);

// Merges the hooks into DIR/.claude/settings.json (claude-code) or
// DIR/.codex/hooks.json (codex), keeping everything else there. A leasefs hook
// already present is updated in place, so running it twice adds nothing.
// Returns 0, or 1 with a message on stderr (the file is then left as it was).
int install_hooks(const std::string& host, const std::string& project_dir);

}  // namespace leasefs::leasectl

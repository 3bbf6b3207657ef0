// `leasectl mcp`: a Model Context Protocol server on stdin/stdout (JSON-RPC 2.0,
// one message per line, protocol revision 2025-06-18) that offers the agent's side
// of leasefs as tools: status, why_refused, request_lease, checkpoint,
// memory_search, memory_save.
//
// It never offers grant, approve or reject: those are a person's. Nor could it
// give them: the daemon takes the caller's role from the socket's peer
// credentials, and this server runs as the agent.
#pragma once

#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace leasefs::leasectl {

// Sends one control command and returns the daemon's reply ({"ok":true,"result":
// ...} or {"ok":false,"error":{...}}); throws std::runtime_error saying why when
// no trusted daemon answers. Called once per tool call, so a daemon restarted in
// between is simply found again.
using DaemonCall =
    std::function<nlohmann::json(const std::string& cmd, const nlohmann::json& args)>;

inline constexpr const char* kMcpProtocolVersion = "2025-06-18";

// Serves until `in` ends. Returns 0.
int run_mcp_server(std::istream& in, std::ostream& out, const DaemonCall& call);

// One message in, at most one message out (nullopt for a notification): the
// server's whole behaviour, for tests and for run_mcp_server.
std::optional<nlohmann::json> handle_mcp_message(const std::string& line, const DaemonCall& call);

}  // namespace leasefs::leasectl

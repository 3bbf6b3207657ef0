// The HTTP side both consoles share (the daemons' console and the fleet's):
// where they listen, the screen every request passes (Host, Origin, the token,
// and for an action the token header and a JSON body), the headers of every
// reply, and the page that takes the token out of the address bar.
#pragma once

#include <httplib.h>

#include <optional>
#include <string>
#include <string_view>

#include "leasectl/console_guard.hpp"

namespace leasefs::leasectl {

inline constexpr const char* kConsoleTokenHeader = "X-Console-Token";

// `listen` (ADDR:PORT, [ADDR]:PORT; port 0 picks a free one) bound on `server`;
// the host and the port bound. Says why not on stderr, as `command`, with the
// exit code in `exit_code` (2: not ADDR:PORT, 1: cannot listen there).
struct Listening {
  std::string host;
  int port = 0;
};
std::optional<Listening> bind_console(httplib::Server& server, const std::string& listen,
                                      const char* command, int& exit_code);

// The screen and the headers, on every route of `server`. `cookie` names the
// cookie this console keeps its token in: a cookie is shared by every port of
// a host, so two consoles side by side each need a name of their own.
void guard_every_request(httplib::Server& server, const ConsoleGuard& guard,
                         const std::string& cookie);

// GET /: with ?token=, into the cookie and a redirect to /; else `html` with its
// "@TOKEN@" replaced by the token (for the action header).
void serve_console_page(httplib::Server& server, const ConsoleGuard& guard,
                        const std::string& cookie, std::string_view html);

void refuse(httplib::Response& res, int status, const std::string& why);

// The URL to open, with the token: the console's first line on stdout.
std::string console_url(const Listening& at, const ConsoleGuard& guard);

}  // namespace leasefs::leasectl

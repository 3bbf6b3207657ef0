// `leasectl console`: a web page, served by this client on loopback, that shows
// every leasefs daemon this user may talk to and acts on them with this user's
// rights (the daemon refuses what it would refuse on the command line).
#pragma once

#include <string>

namespace leasefs::leasectl {

struct ConsoleOptions {
  std::string listen = "127.0.0.1:0";  // ADDR:PORT; port 0 picks a free one
  std::string socket;                  // one daemon only; empty: every one found
};

// Prints the URL with its token as the first line of stdout, then serves until
// SIGINT or SIGTERM. Returns the process's exit code.
int run_console(const ConsoleOptions& options);

}  // namespace leasefs::leasectl

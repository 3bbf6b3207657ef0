// `leasefs demo`: the whole story end to end in a temporary directory.
#pragma once

namespace leasefs::daemon {

// argv[0] is "demo". Returns the process exit status.
int run_demo(int argc, char** argv);

}  // namespace leasefs::daemon

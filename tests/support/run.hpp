// Tests run real tools through the project's one spawner (base/spawn.hpp).
#pragma once

#include "base/spawn.hpp"

namespace leasefs::test {

using base::run_argv;
using base::run_sh;
using base::RunOptions;
using base::RunResult;

}  // namespace leasefs::test

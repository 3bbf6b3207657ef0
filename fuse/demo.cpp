#include "fuse/demo.hpp"

#include <cstdio>

namespace leasefs::fuse {

int run_demo(int /*argc*/, char** /*argv*/) {
  std::fprintf(stderr, "demo not built yet\n");
  return 2;
}

}  // namespace leasefs::fuse

// What the libfuse leasefs is built with can do (cmake/libfuse.cmake picks it).
// fuse-over-io_uring and kernel passthrough came with libfuse 3.18 (Debian 12
// has 3.14): built with an older one, the same code runs without them.
#pragma once

#include <fuse_lowlevel.h>

#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 18) && defined(FUSE_CAP_OVER_IO_URING)
#define LEASEFS_FUSE_IO_URING 1
#else
#define LEASEFS_FUSE_IO_URING 0
#endif

#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 18) && defined(FUSE_CAP_PASSTHROUGH)
#define LEASEFS_FUSE_PASSTHROUGH 1
#else
#define LEASEFS_FUSE_PASSTHROUGH 0
#endif

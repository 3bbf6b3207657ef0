# Which libfuse leasefs is built with (-DLEASEFS_FUSE=...):
#   auto    the system's when pkg-config finds >= 3.18; else the static 3.18 that
#           scripts/build-libfuse installed into LEASEFS_LIBFUSE_PREFIX; else the
#           system's older one (Debian 12: 3.14), without io_uring or passthrough
#   system  the system's, whatever its version
#   built   the one in LEASEFS_LIBFUSE_PREFIX, or fail
# Defines PkgConfig::FUSE3 and LEASEFS_FUSE_VERSION.
set(LEASEFS_FUSE auto CACHE STRING "libfuse to build with: auto, system or built")
set_property(CACHE LEASEFS_FUSE PROPERTY STRINGS auto system built)
set(LEASEFS_LIBFUSE_PREFIX /opt/leasefs/libfuse-3.18.3 CACHE PATH
    "where scripts/build-libfuse installed its static libfuse")
if(NOT LEASEFS_FUSE MATCHES "^(auto|system|built)$")
  message(FATAL_ERROR "LEASEFS_FUSE must be auto, system or built, not '${LEASEFS_FUSE}'")
endif()

set(leasefs_fuse_from "")
if(LEASEFS_FUSE STREQUAL "auto")
  pkg_check_modules(FUSE3 QUIET IMPORTED_TARGET fuse3>=3.18)
  if(FUSE3_FOUND)
    set(leasefs_fuse_from "the system's")
  endif()
endif()
if(NOT leasefs_fuse_from AND NOT LEASEFS_FUSE STREQUAL "system"
   AND EXISTS "${LEASEFS_LIBFUSE_PREFIX}/lib/pkgconfig/fuse3.pc")
  # Only this prefix: the static library, not the system's shared one.
  set(leasefs_saved_pkg_config_path "$ENV{PKG_CONFIG_PATH}")
  set(ENV{PKG_CONFIG_PATH} "${LEASEFS_LIBFUSE_PREFIX}/lib/pkgconfig")
  unset(FUSE3_FOUND CACHE)
  pkg_check_modules(FUSE3 REQUIRED IMPORTED_TARGET GLOBAL fuse3>=3.18)
  set(ENV{PKG_CONFIG_PATH} "${leasefs_saved_pkg_config_path}")
  set(leasefs_fuse_from "the static one in ${LEASEFS_LIBFUSE_PREFIX}, linked in,")
endif()
if(NOT leasefs_fuse_from)
  if(LEASEFS_FUSE STREQUAL "built")
    message(FATAL_ERROR "no libfuse in ${LEASEFS_LIBFUSE_PREFIX}: run scripts/build-libfuse (or scripts/install-deps)")
  endif()
  pkg_check_modules(FUSE3 REQUIRED IMPORTED_TARGET fuse3)
  set(leasefs_fuse_from "the system's")
endif()
set(LEASEFS_FUSE_VERSION ${FUSE3_VERSION})
if(LEASEFS_FUSE_VERSION VERSION_LESS 3.18)
  message(WARNING "leasefs: building with libfuse ${LEASEFS_FUSE_VERSION} (${leasefs_fuse_from}): no fuse-over-io_uring, "
                  "no kernel passthrough. scripts/build-libfuse builds 3.18.")
else()
  message(STATUS "leasefs: libfuse ${LEASEFS_FUSE_VERSION}, ${leasefs_fuse_from}")
endif()

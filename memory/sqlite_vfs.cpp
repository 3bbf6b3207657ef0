#include "memory/sqlite_vfs.hpp"

#include <sqlite3.h>

#include <cstring>
#include <mutex>

namespace leasefs::memory {

namespace {

constexpr const char* kName = "leasefs-verbatim";

sqlite3_vfs g_vfs;
sqlite3_vfs* g_base = nullptr;

int full_pathname(sqlite3_vfs*, const char* name, int out_size, char* out) {
  if (name[0] != '/') return g_base->xFullPathname(g_base, name, out_size, out);
  size_t n = std::strlen(name);
  if (n + 1 > static_cast<size_t>(out_size)) return SQLITE_CANTOPEN;
  std::memcpy(out, name, n + 1);
  return SQLITE_OK;
}

}  // namespace

const char* verbatim_path_vfs() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_base = sqlite3_vfs_find(nullptr);
    if (!g_base) return;
    g_vfs = *g_base;
    g_vfs.zName = kName;
    g_vfs.pNext = nullptr;
    g_vfs.xFullPathname = full_pathname;
    if (sqlite3_vfs_register(&g_vfs, 0) != SQLITE_OK) g_base = nullptr;
  });
  return g_base ? kName : nullptr;
}

}  // namespace leasefs::memory

// SQLite's unix VFS turns every database path into a canonical one, following
// symbolic links. leasefs opens its databases as /proc/self/fd/N/memory.db, where
// fd N is the root's .longrun reached *underneath* the mount; canonicalized, that
// becomes <root>/.longrun/memory.db, which, once the mount covers the root, leads
// through the daemon's own mount. Every later open, stat and unlink of the WAL,
// shared-memory and journal files would then be a FUSE request to the daemon
// itself: refused by its own gate, or never answered once its loop has stopped.
//
// The VFS named here is the default one with a single change: an absolute path
// is used as given, so /proc/self/fd/N/... keeps reaching the tree underneath.
#pragma once

namespace leasefs::memory {

// Registers (once) and returns the name of that VFS, for sqlite3_open_v2.
const char* verbatim_path_vfs();

}  // namespace leasefs::memory

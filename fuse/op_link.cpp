// link: a new name for existing content (gate::decide_link). A hard link must not
// carry .longrun content out (I5), and it must not make an out-of-scope file
// writable under an in-scope name: under a grant for `src/**`, `ln docs/x src/x`
// followed by `echo > src/x` would rewrite docs/x. So the source must be covered
// too, and for every op class the new name would allow on the content (with an
// unnarrowed grant this costs no path resolution).
#include <fcntl.h>
#include <unistd.h>

#include "fuse/operations.hpp"

namespace leasefs::fuse {

namespace {

int do_link(fuse_req_t req, Filesystem& fs, Inode& inode, Inode& dir, const char* name,
            fuse_entry_param* e) {
  const gate::Caller caller = Filesystem::caller(req);
  const bool source_protected = inode.protected_path.load();
  const bool name_protected = fs.child_protected(dir, name);
  auto ask = [&](bool resolve, gate::Effect* refused) {
    const std::string source =
        resolve || source_protected ? fs.gate_path_of(inode, {}, source_protected) : std::string();
    const std::string target =
        resolve || name_protected ? fs.gate_path_of(dir, name, name_protected) : std::string();
    return fs.gate().check_link(source, target, caller, refused);
  };
  gate::Effect refused;
  bool resolved = fs.gate().needs_path();
  gate::Verdict v = ask(resolved, &refused);
  if (!v.allowed && !resolved) v = ask(true, &refused);  // report real paths
  if (!v.allowed) {
    NotedRefusal noted{gate::Op::kLink, {}, {}, {}};
    if (RefusalNote::active()) {
      noted.paths = {fs.gate_path_of(inode, {}, source_protected),
                     fs.gate_path_of(dir, name, name_protected)};
    }
    fs.refuse(refused.op, refused.path, caller, v.reason, std::move(noted));
    return -EACCES;
  }
  if (int res = fs.room_for(gate::Op::kLink); res < 0) return res;
  if (int res = fs.journal_entry(dir, name); res < 0) return res;
  fs.report_allowed(gate::Op::kLink, fs.gate_path_of(inode, {}, source_protected), caller,
                    v.grant_id, fs.gate_path_of(dir, name, name_protected));
  // AT_EMPTY_PATH on an O_PATH fd needs CAP_DAC_READ_SEARCH; the /proc path works
  // for everyone else.
  static const bool is_root = ::geteuid() == 0;
  // A second name: which one /proc shows for the file may change (path_cache.hpp).
  // No directory has two.
  NamesChanging changing(fs.names(), NamesChanging::Reach::kFiles);
  int res = is_root ? ::linkat(inode.fd.get(), "", dir.fd.get(), name, AT_EMPTY_PATH)
                    : ::linkat(AT_FDCWD, Filesystem::fd_path(inode.fd.get()).c_str(), dir.fd.get(),
                               name, AT_SYMLINK_FOLLOW);
  if (res != 0) return -errno;
  return fs.lookup(dir, name, e);
}

}  // namespace

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
  attempt_or_park(req, "link", [ino, newparent, newname = std::string(newname)](fuse_req_t req) {
    Filesystem& fs = Filesystem::of(req);
    fuse_entry_param e{};
    int res = do_link(req, fs, fs.inode(ino), fs.inode(newparent), newname.c_str(), &e);
    if (res < 0) return res;
    fuse_reply_entry(req, &e);
    return 0;
  });
}

}  // namespace leasefs::fuse

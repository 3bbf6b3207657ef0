// rename, with RENAME_NOREPLACE / RENAME_EXCHANGE passed to renameat2.
//
// The gate judges the rename's effect (gate/effect.hpp): both names; a directory's
// whole subtree under its old and new name (listed here, bounded, only when some
// grant is narrowed by path); the deletion of a target it replaces; and for
// RENAME_EXCHANGE, the same both ways. Either name may be under .longrun.
//
// A target that appears between the check and the rename would be deleted
// without its deletion having been asked: when the check saw no target, the
// rename runs with RENAME_NOREPLACE, and an EEXIST sends it round again with the
// target in view.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <stdio.h>
#include <sys/stat.h>

#include <optional>

#include "fuse/operations.hpp"
#include "fuse/subtree.hpp"

namespace leasefs::fuse {

namespace {

gate::RenameTarget target_kind(const Inode& dir, const char* name) {
  struct stat st {};
  if (::fstatat(dir.fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return gate::RenameTarget::kAbsent;
  }
  return S_ISDIR(st.st_mode) ? gate::RenameTarget::kDirectory : gate::RenameTarget::kFile;
}

// Whether the rename about to run moves files only, by the kinds it saw: a file
// (not absent: a directory may be made there) at the old name, and at the new
// one no directory (and, for an exchange, a file). Trusted by NamesChanging only
// when no other change of names overlapped the rename (path_cache.hpp).
bool moves_only_files(gate::RenameTarget from_kind, const gate::RenamePlan& plan) {
  if (from_kind != gate::RenameTarget::kFile) return false;
  return plan.exchange ? plan.target == gate::RenameTarget::kFile
                       : plan.target != gate::RenameTarget::kDirectory;
}

// A rename that ran with `flags` and may have replaced a target: the inode
// cache's sweep looks for files with no name left.
int renamed(Filesystem& fs, unsigned int flags) {
  if ((flags & (RENAME_NOREPLACE | RENAME_EXCHANGE)) == 0) fs.note_name_dropped();
  return 0;
}

// A temporary sibling (gate/temp_sibling.hpp) goes only onto a path the lease
// covers for writing; there it stops being a sibling.
int rename_temp_sibling(Filesystem& fs, const TempSibling& sibling, Inode& from, const char* name,
                        Inode& to, const char* newname, unsigned int flags,
                        const gate::Caller& caller, NamesChanging& changing) {
  gate::RenamePlan plan;
  plan.from = fs.gate_path_of(from, name, false);
  plan.to = fs.gate_path_of(to, newname, fs.child_protected(to, newname));
  const gate::RenameTarget from_kind = target_kind(from, name);
  plan.from_is_dir = from_kind == gate::RenameTarget::kDirectory;
  plan.target = target_kind(to, newname);
  // Onto a new name only as a create of it: and then a name that appears
  // meanwhile is not replaced (RENAME_NOREPLACE), for replacing is a write.
  const bool onto_file = plan.target != gate::RenameTarget::kAbsent;
  if (!onto_file) flags |= RENAME_NOREPLACE;
  gate::Verdict v =
      fs.gate().check_temp_sibling_rename(plan.from, plan.to, onto_file, sibling.turn, caller);
  if (!v.allowed) {
    fs.refuse(gate::Op::kRename, plan.to, caller, v.reason,
              {gate::Op::kRename, {}, {plan.from, plan.to}, {}});
    return -EACCES;
  }
  if (int res = fs.journal_rename(plan); res < 0) return res;
  fs.report_allowed(gate::Op::kRename, plan.from, caller, v.grant_id, plan.to);
  changing.saw_only_files(moves_only_files(from_kind, plan));
  if (::renameat2(from.fd.get(), name, to.fd.get(), newname, flags) != 0) return -errno;
  fs.temp_siblings().erase(sibling.dev, sibling.ino);
  return renamed(fs, flags);
}

int do_rename(fuse_req_t req, Filesystem& fs, Inode& from, const char* name, Inode& to,
              const char* newname, unsigned int flags, NamesChanging& changing) {
  const gate::Caller caller = Filesystem::caller(req);
  gate::Gate& gate = fs.gate();
  if (std::optional<TempSibling> sibling = fs.temp_sibling_at(from, name);
      sibling && (flags & RENAME_EXCHANGE) == 0) {
    return rename_temp_sibling(fs, *sibling, from, name, to, newname, flags, caller, changing);
  }
  for (int attempt = 0;; ++attempt) {
    gate::RenamePlan plan;
    plan.from = fs.gate_path_of(from, name, fs.child_protected(from, name));
    plan.to = fs.gate_path_of(to, newname, fs.child_protected(to, newname));
    plan.exchange = (flags & RENAME_EXCHANGE) != 0;
    const gate::RenameTarget from_kind = target_kind(from, name);
    plan.from_is_dir = from_kind == gate::RenameTarget::kDirectory;
    plan.target = target_kind(to, newname);
    // Subtrees matter only to path-narrowed grants; unwalked, they count as
    // incomplete, and a refusal walks them and asks again.
    auto walk = [&] {
      if (plan.from_is_dir) plan.from_tree = list_subtree(from.fd.get(), name, plan.from.size());
      if (plan.exchange && plan.target == gate::RenameTarget::kDirectory) {
        plan.to_tree = list_subtree(to.fd.get(), newname, plan.to.size());
      }
    };
    bool walked = gate.needs_path();
    if (walked) walk();
    gate::Effect refused;
    gate::Verdict v = gate.check_rename(plan, caller, &refused);
    if (!v.allowed && !walked &&
        (plan.from_is_dir || (plan.exchange && plan.target == gate::RenameTarget::kDirectory))) {
      walk();
      v = gate.check_rename(plan, caller, &refused);
    }
    if (!v.allowed) {
      // Asked of a person, the rename needs both names, and a moved directory's
      // (or an exchanged one's) whole subtree at both.
      NotedRefusal noted{gate::Op::kRename, {}, {}, {}};
      const bool trees =
          plan.from_is_dir || (plan.exchange && plan.target == gate::RenameTarget::kDirectory);
      (trees ? noted.trees : noted.paths) = {plan.from, plan.to};
      fs.refuse(refused.op, refused.path, caller, v.reason, std::move(noted));
      SPDLOG_DEBUG("refused rename {} -> {} ({} {}): {}", plan.from, plan.to,
                   gate::op_name(refused.op), refused.path, gate::to_string(v.reason));
      return -EACCES;
    }
    if (int res = fs.journal_rename(plan); res < 0) return res;
    if (attempt == 0) fs.report_allowed(gate::Op::kRename, plan.from, caller, v.grant_id, plan.to);
    unsigned int run_flags = flags;
    const bool guard_target = !plan.exchange && plan.target == gate::RenameTarget::kAbsent &&
                              (flags & RENAME_NOREPLACE) == 0;
    if (guard_target) run_flags |= RENAME_NOREPLACE;
    changing.saw_only_files(moves_only_files(from_kind, plan));
    if (::renameat2(from.fd.get(), name, to.fd.get(), newname, run_flags) == 0) {
      return renamed(fs, run_flags);
    }
    const int err = errno;
    if (guard_target && err == EEXIST && attempt < 3) continue;  // judge the new target
    if (guard_target && err == EINVAL) {
      // A backing filesystem without RENAME_NOREPLACE: the plain rename, as asked.
      if (::renameat2(from.fd.get(), name, to.fd.get(), newname, flags) == 0) {
        return renamed(fs, flags);
      }
      return -errno;
    }
    return -err;
  }
}

}  // namespace

void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
               const char* newname, unsigned int flags) {
  attempt_or_park(req, "rename",
                  [parent, name = std::string(name), newparent, newname = std::string(newname),
                   flags](fuse_req_t req) {
                    Filesystem& fs = Filesystem::of(req);
                    int res = 0;
                    {
                      // Ends before the reply (path_cache.hpp).
                      NamesChanging changing(fs.names(), NamesChanging::Reach::kDirectories);
                      res = do_rename(req, fs, fs.inode(parent), name.c_str(), fs.inode(newparent),
                                      newname.c_str(), flags, changing);
                    }
                    if (res < 0) return res;
                    reply_status(req, 0);
                    return 0;
                  });
}

}  // namespace leasefs::fuse

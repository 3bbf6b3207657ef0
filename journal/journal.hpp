// The per-turn journal (.longrun/journal/): before the first mutation of a path in
// a turn, what is needed to put it back — its content, mode, owner, times, xattrs
// and symlink target, or the fact that it did not exist.
//
// Layout: one directory per turn, `<turn>/`, holding `index.jsonl` (one JSON entry
// per line, appended, never rewritten) and one blob per saved content, `b<seq>`.
// Crash safety: the blob is written and fsynced, its name made durable (fsync of
// the turn directory), then the index line appended and fdatasynced, and only
// then does before() return and the mutation proceed. A crash before the index
// line leaves an orphan blob and no entry (the mutation never ran); a torn last
// line is ignored on reading (its mutation never ran either).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/disk_reserve.hpp"
#include "base/unique_fd.hpp"
#include "journal/entry_kind.hpp"

namespace leasefs::journal {

struct Options {
  bool enabled = true;
  uint64_t max_file_bytes = uint64_t{256} << 20;  // a larger file is "not undoable"
  uint64_t max_turn_bytes = uint64_t{4} << 30;    // past this, contents are "not undoable"
  uint64_t keep_turns = 50;                       // older turns are deleted
  uint64_t keep_bytes = uint64_t{16} << 30;       // and the oldest while over this
  // "Did not exist" entries (creates) are written before their mutation but
  // synced with the next entry that protects content or metadata (see append).
  bool lazy_absent = true;
};

// One pre-image.
struct Entry {
  // A fact for diff (a rename, a leftover taken out of the tree), not a pre-image.
  bool is_fact() const noexcept {
    return kind == EntryKind::kRename || kind == EntryKind::kLeftover ||
           kind == EntryKind::kContent;
  }

  uint64_t seq = 0;
  uint64_t turn = 0;
  std::string path;
  EntryKind kind = EntryKind::kOther;
  uint32_t mode = 0, uid = 0, gid = 0;
  int64_t atime_ns = 0, mtime_ns = 0;
  uint64_t size = 0, ino = 0, nlink = 0;
  std::string target;                         // symlink
  std::map<std::string, std::string> xattrs;  // name -> hex value
  std::string blob;                           // file content, "b<seq>"; empty if not kept
  // A file first changed by an append: only its length (`size`) is kept, for
  // the bytes before it are still the file's own. Its first other change keeps
  // those bytes then, in a "content" fact (first_preimages merges the two).
  bool appended = false;
  bool undoable = true;
  std::string why;     // when not undoable
  std::string origin;  // "" (the tree's users) or "undo:<turn>"
  std::string hash;    // SHA-256 of the index line (the audit records it)

  // The entry's line in the index (without its newline): compact JSON, keys in order.
  std::string line() const;
  static Entry from_json(const nlohmann::json& j);
};

class Journal {
 public:
  // `root_fd` reaches the backing tree; `longrun_fd` its .longrun directory.
  Journal(int root_fd, int longrun_fd, Options options = {});
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  bool enabled() const noexcept { return options_.enabled; }
  const Options& options() const noexcept { return options_; }
  int root_fd() const noexcept { return root_.get(); }

  // Before a mutation of `path` (relative to the root) in `turn`: records its
  // pre-image unless this turn already has one. 0, or -errno when the pre-image
  // could not be made durable (the caller then refuses the mutation). Paths the
  // journal does not keep (.longrun, unresolved) return 0.
  int before(uint64_t turn, std::string_view path, std::string_view origin = {});
  // The same before appends through a descriptor that can only append (opened
  // O_APPEND, not O_TRUNC): a file's pre-image is its length and metadata only
  // (Entry::appended), until anything else changes it in the turn.
  int before_append(uint64_t turn, std::string_view path);
  // The same for `path` and everything beneath it (a directory renamed or removed whole).
  int before_tree(uint64_t turn, std::string_view path, std::string_view origin = {});
  // A directory `from` about to arrive at `to` (a rename over an empty directory,
  // or an exchange): each name beneath `from` appears beneath `to`, so the same
  // name beneath `to` is kept as it is now (mostly: absent), for undo to clear.
  int before_arrival(uint64_t turn, std::string_view from, std::string_view to);
  // Before a rename of `from` to `to` (or their exchange): the pre-images of both
  // names (a directory's with everything beneath it), of what will arrive beneath
  // a directory that stays, and the fact of the rename (kind "rename", `path` ->
  // `target`, for diff, which otherwise sees a delete and a create). One call, so
  // that its unsynced lines go to the index in one write.
  int before_rename(uint64_t turn, std::string_view from, bool from_is_dir, std::string_view to,
                    bool to_is_dir, bool exchange);
  // A temporary sibling that outlived its lease (gate/temp_sibling.hpp): the file
  // at `path`, if it is still (dev, ino), is moved out of the tree into `turn`'s
  // journal as a blob (copied, and the name removed, when another name keeps the
  // file), and a "leftover" fact records it for diff. 1 when the file itself
  // moved (it is the journal's now), 0 when a copy was kept, or -errno (-ESTALE
  // when `path` no longer names that file).
  int keep_leftover(uint64_t turn, std::string_view path, dev_t dev, ino_t ino);
  // Fast path for writes through an open file: whether this inode already has a
  // pre-image in `turn` (remember_inode after a before()); for an append
  // (`append`), an appended-only one will do.
  bool inode_seen(uint64_t turn, dev_t dev, ino_t ino, bool append = false);
  void remember_inode(uint64_t turn, dev_t dev, ino_t ino);

  // Turns that have a journal, ascending.
  std::vector<uint64_t> turns() const;
  // The entries of `turn` in order (torn last line skipped).
  std::vector<Entry> entries(uint64_t turn) const;
  // A path to a blob that reaches .longrun under any mount ("/proc/self/fd/N/...").
  std::string blob_path(uint64_t turn, const std::string& blob) const;
  // Bytes kept for `turn` (blobs and index).
  uint64_t turn_bytes(uint64_t turn) const;

  // Told of every entry once it is written (for the audit chain and events),
  // before the call that made it returns but outside the journal's lock, in
  // the order the entries were made.
  void set_listener(std::function<void(const Entry&)> fn);
  // The disk's reserve (base/disk_reserve.hpp): while the disk is full, or when a
  // copy meets ENOSPC, a file's pre-image is its metadata only (undoable: false),
  // so that the journal neither eats the reserve nor stops a removal that frees
  // space. Set before use.
  void set_disk_reserve(base::DiskReserve* reserve) noexcept { reserve_ = reserve; }
  // What status shows of `turn`, from memory: bytes as counted against
  // max_turn_bytes. Only a turn that has a directory but is not the one being
  // recorded (a restart within a turn, before its first write) is read from
  // disk: base::would_block_here() first.
  struct Summary {
    uint64_t bytes = 0;
    size_t turns_kept = 0;
    std::vector<std::string> not_undoable;  // paths marked so in `turn`
    uint64_t older_bytes = 0;               // held by the turns before it, as of its start
  };
  Summary summary(uint64_t turn) const;

  // Deletes turns beyond the retention (never `current`): past keep_turns, and
  // the oldest while the older turns hold more than keep_bytes or a quarter of
  // what is theirs or free on the disk (journal/retention.hpp).
  void prune(uint64_t current);
  // `leasectl journal prune`: deletes every turn before `current` but the
  // newest `keep`, and says what each held: its bytes, and the paths it could
  // have put back (none of them can be undone any more). `dry_run`: says only.
  struct Pruned {
    uint64_t turn = 0;
    uint64_t bytes = 0;
    std::vector<std::string> paths;
  };
  std::vector<Pruned> prune_older(uint64_t current, uint64_t keep, bool dry_run);

 private:
  int record_locked(uint64_t turn, const std::string& path, std::string_view origin,
                    bool as_parent = false, bool append = false);
  // Keeps the bytes an appended-only pre-image of `path` stood for (a "content"
  // fact), before the file is changed other than by an append.
  int keep_appended_locked(const std::string& path);
  int open_turn_locked(uint64_t turn);
  int append_locked(Entry& e, bool lazy);
  // Writes the held lines (below); on failure forgets their entries, as if never made.
  int flush_locked();
  bool held(const Entry& e, bool lazy) const noexcept;
  int tree_locked(uint64_t turn, std::string_view path, std::string_view origin);
  int arrival_locked(uint64_t turn, std::string_view from, std::string_view to);
  int rename_locked(uint64_t turn, std::string_view from, bool from_is_dir, std::string_view to,
                    bool to_is_dir, bool exchange);
  // Keeps [0, size) of `src` as e's blob.
  int save_content_locked(int src, uint64_t size, Entry& e);
  // Hands the entries this call made to the listener, after `lock` (on mu_) is
  // let go: a FUSE worker builds and publishes events without holding up others.
  void publish(std::unique_lock<std::mutex>& lock);
  // One journal call: `record` under the lock, the held lines flushed, then the
  // listener told with the lock let go. The first error wins.
  template <typename Record>
  int under_lock(Record record) {
    std::unique_lock lock(mu_);
    const int r = record();
    const int f = flush_locked();
    publish(lock);
    return r < 0 ? r : f;
  }

  base::UniqueFd root_;
  base::UniqueFd longrun_;
  base::UniqueFd dir_;  // .longrun/journal
  Options options_;

  mutable std::mutex mu_;
  static constexpr uint64_t kNoTurn = ~uint64_t{0};
  uint64_t turn_ = kNoTurn;  // the turn being recorded
  base::UniqueFd turn_dir_;
  base::UniqueFd index_;
  uint64_t seq_ = 0;
  uint64_t bytes_ = 0;
  bool unsynced_ = false;  // an index line written but not yet fdatasynced
  // Lines that need no sync of their own ("did not exist", a lazy directory, a
  // rename's fact), held until the call that made them ends or a synced line
  // follows, and then written with it: one write() per mutation. Every public
  // call flushes before it returns, so each is written before its mutation runs.
  std::string held_lines_;
  std::vector<std::pair<Entry, bool>> held_;  // each with whether it added to paths_
  // The agent names these paths: ordered sets, not hash sets, since names made to
  // collide in std::hash (unseeded) would make every lookup, under mu_, walk them
  // all. Here one costs at most log2(size) comparisons whatever the names.
  std::set<std::string, std::less<>> pending_dirs_;  // directories among those lines
  std::set<std::string, std::less<>> paths_;
  std::set<std::pair<uint64_t, uint64_t>> inodes_;
  // Appended-only pre-images of the turn: by path, and the path by inode.
  struct Appended {
    uint64_t size = 0, dev = 0, ino = 0;
  };
  std::map<std::string, Appended> appended_;
  std::map<std::pair<uint64_t, uint64_t>, std::string> appended_inodes_;
  std::vector<std::string> not_undoable_;
  // The turns with a directory, as of the start or of turn_'s opening and its
  // retention (only open_turn_locked creates or removes one).
  std::vector<uint64_t> kept_;
  uint64_t older_bytes_ = 0;  // the kept turns before turn_, as of its start or the last prune
  std::function<void(const Entry&)> listener_;
  std::vector<Entry> heard_;  // written, for the listener once mu_ is let go (publish)
  std::mutex publish_mu_;     // taken under mu_, held while publishing: events keep their order
  base::DiskReserve* reserve_ = nullptr;
};

}  // namespace leasefs::journal

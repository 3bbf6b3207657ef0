// A reference model of the gate, written from DESIGN.md ("Gated operations",
// "Path globs", "Protected paths", temporary siblings, the task's status), not
// from gate/: what a person reading the documentation expects each operation to
// get. It shares no code with the gate; its globs are regular expressions.
//
// It keeps its own view of the tree (names, types and which names are one file),
// enough to say which errors the kernel gives before the file system is asked
// (ENOENT, EEXIST, EISDIR, ...), which subtree a rename moves, which file a kept
// descriptor writes, and which temporary siblings outlive their turn.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace leasefs::test::model {

// Op classes, as `--ops` names them.
enum Cls : uint8_t { kW = 1, kC = 2, kR = 4, kU = 8, kA = 16 };
inline constexpr uint8_t kAllCls = 31;

// A rule the model can be told to forget, to show the driver finds a model that
// is wrong (LEASEFS_MODEL_BREAK=<name>).
enum class Broken : uint8_t {
  kNone,
  kOpClasses,       // "op_classes": a grant's op classes are ignored
  kReplaceUnlinks,  // "replace_unlinks": renaming over a target needs no unlink class
  kSiblings,        // "siblings": no temporary siblings
};
Broken broken_from_name(const std::string& name);

struct MGrant {
  std::vector<std::string> paths;  // empty: the whole tree
  uint8_t ops = kAllCls;
  // Its TTL has passed: it is in the snapshot but in force no more. The service
  // publishes at every expiry, as at a revoke (DESIGN.md, "grants that expire").
  bool expired = false;
};

// What the service would publish: grants are those of the current turn.
struct MState {
  bool in_progress = true;
  uint64_t turn = 1;
  std::vector<MGrant> grants;
};

// `pattern` (a --path glob) matches `path` (relative to the root).
bool model_glob(const std::string& pattern, const std::string& path);

enum class Kind : uint8_t { kFile, kDir, kSymlink };

struct Node {
  Kind kind = Kind::kFile;
  uint64_t file = 0;  // which file (hard links share it)
};

// The operations the driver runs, as the agent.
enum class OpKind : uint8_t {
  kCreate,     // open(O_CREAT|O_EXCL|O_WRONLY)
  kTrunc,      // open(O_WRONLY|O_TRUNC)
  kAppend,     // open(O_WRONLY|O_APPEND) and write
  kKeep,       // open(O_RDWR), kept in a slot
  kWriteKept,  // pwrite through a kept descriptor
  kTruncKept,  // ftruncate through a kept descriptor
  kChmodKept,  // fchmod through a kept descriptor
  kCloseKept,
  kTruncate,  // truncate(2) by name
  kUnlink,
  kRmdir,
  kRename,  // flags: 0, RENAME_NOREPLACE, RENAME_EXCHANGE
  kLink,
  kSymlink,
  kChmod,
  kUtimes,  // utimensat(AT_SYMLINK_NOFOLLOW)
  kMkdir,
  kSetxattr,
  kRemovexattr,
  kFallocate,  // open(O_WRONLY) and fallocate
  kCopyRange,  // open(O_WRONLY) and copy_file_range from a file outside the pool
};
const char* op_kind_name(OpKind kind);

struct Op {
  OpKind kind = OpKind::kCreate;
  std::string a, b;  // paths relative to the root
  unsigned flags = 0;
  unsigned mode = 0644;
  int slot = 0;
  long len = 0;
};

// The model's answer to an operation: an errno the kernel gives before the file
// system is asked, or whether the gate lets it through (then the file system's
// own answer, as a plain directory gives it, is the answer).
struct Expect {
  int kernel_errno = 0;  // nonzero: this, whatever the lease
  bool allowed = false;
  bool either = false;  // the file has names the gate judges differently: either answer
};

class GateModel {
 public:
  explicit GateModel(Broken broken = Broken::kNone) : broken_(broken) {}
  // The protected globs (by default those the driver's mount has).
  void set_protected(std::vector<std::string> globs) { protected_ = std::move(globs); }
  // A leftover with no other name is moved into the journal (the mount has one),
  // under .longrun: a descriptor kept on it changes nothing there (I5).
  bool in_longrun(uint64_t file) const { return longrun_.count(file) != 0; }
  // The names the temporary siblings were created with (the driver keeps
  // descriptors on them more often than on other files).
  std::vector<std::string> sibling_paths() const {
    std::vector<std::string> out;
    for (const auto& [file, name] : sibling_names_) out.push_back(name);
    return out;
  }

  void add(const std::string& path, Kind kind);  // the seed tree
  const std::map<std::string, Node>& tree() const { return tree_; }
  std::vector<std::string> names_of(uint64_t file) const;

  Expect expect(const Op& op) const;
  // The operation succeeded (in the plain directory): follow it.
  void apply(const Op& op);
  // A new state is published; returns the temporary siblings that outlived their
  // lease and are gone from the tree (paths).
  std::vector<std::string> publish(const MState& state);
  const MState& state() const { return state_; }

  // Slots of kept descriptors: which file each holds.
  std::optional<uint64_t> kept(int slot) const;

 private:
  bool decide(uint8_t cls, const std::string& path) const;
  bool covers(const MGrant& g, const std::string& path) const;
  bool names_explicitly(const std::string& pattern, const std::string& path,
                        const std::string& guard) const;
  const std::string* protecting(const std::string& path) const;
  bool rename_allowed(const Op& op) const;
  bool link_allowed(const std::string& from, const std::string& to, bool* either) const;
  bool sibling_live(uint64_t turn) const;
  bool may_make_sibling(const std::string& path) const;
  bool reaches_into(const std::string& pattern, const std::string& dir) const;
  std::optional<uint64_t> sibling_of(uint64_t file) const;
  bool kept_allowed(uint8_t cls, uint64_t file, bool* either) const;
  std::vector<std::string> subtree(const std::string& dir) const;  // relative names
  const Node* at(const std::string& path) const;
  int parent_error(const std::string& path) const;
  int kernel_error(const Op& op) const;
  void remove_name(const std::string& path);

  Broken broken_;
  MState state_;
  std::vector<std::string> protected_ = {".git/hooks/**", ".git/config"};
  std::map<std::string, Node> tree_;
  uint64_t next_file_ = 1;
  std::map<uint64_t, uint64_t> siblings_;  // file -> turn
  std::map<uint64_t, std::string> sibling_names_;
  std::map<int, uint64_t> kept_;
  std::set<uint64_t> longrun_;  // files moved into the journal
};

}  // namespace leasefs::test::model

#include "tests/model/driver.hpp"

#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "base/clock.hpp"
#include "tests/model/agent_process.hpp"
#include "tests/support/mounted_fs.hpp"

namespace leasefs::test::model {

namespace {

namespace stdfs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The seed tree, in the model and on disk: a project with a protected .git.
const std::vector<std::pair<std::string, Kind>> kSeed = {
    {"src", Kind::kDir},
    {"src/a", Kind::kFile},
    {"src/b", Kind::kFile},
    {"src/sub", Kind::kDir},
    {"src/sub/a", Kind::kFile},
    {"docs", Kind::kDir},
    {"docs/c.txt", Kind::kFile},
    {".git", Kind::kDir},
    {".git/config", Kind::kFile},
    {".git/hooks", Kind::kDir},
    {".git/hooks/pre-commit", Kind::kFile},
};

void seed_dir(const std::string& dir) {
  for (const auto& [path, kind] : kSeed) {
    const std::string full = dir + "/" + path;
    if (kind == Kind::kDir) {
      ::mkdir(full.c_str(), 0755);
    } else {
      std::ofstream(full) << "seed of " << path << "\n";
      ::chmod(full.c_str(), 0644);
    }
  }
  std::ofstream(dir + "/" + kCopySource) << std::string(200, 's');
  ::chmod((dir + "/" + kCopySource).c_str(), 0644);
  for (const auto& e : stdfs::recursive_directory_iterator(dir)) {
    ::lchown(e.path().c_str(), kAgentUid, kAgentUid);
  }
  ::chown(dir.c_str(), kAgentUid, kAgentUid);
}

// One line per name: type, mode, owner, size, content, link target, which
// earlier name it is a hard link of, and its xattr.
std::string digest(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (auto it = stdfs::recursive_directory_iterator(dir, ec);
       !ec && it != stdfs::recursive_directory_iterator(); it.increment(ec)) {
    std::string rel = it->path().string().substr(dir.size() + 1);
    if (rel == ".longrun") {
      it.disable_recursion_pending();  // the journal's: compared through the model's kept fds
      continue;
    }
    paths.push_back(std::move(rel));
  }
  if (ec) return "(walk failed: " + ec.message() + ")";
  std::sort(paths.begin(), paths.end());
  std::map<std::pair<dev_t, ino_t>, std::string> first;
  std::string out;
  for (const std::string& rel : paths) {
    const std::string full = dir + "/" + rel;
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0) {
      out += rel + " (vanished)\n";
      continue;
    }
    std::ostringstream line;
    line << rel << " type=" << (st.st_mode & S_IFMT) << " mode=" << std::oct << (st.st_mode & 07777)
         << std::dec << " owner=" << st.st_uid << ":" << st.st_gid;
    if (S_ISREG(st.st_mode)) {
      std::ifstream in(full, std::ios::binary);
      std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      line << " size=" << st.st_size << " content=" << std::hash<std::string>{}(content)
           << " nlink=" << st.st_nlink;
      auto [it, fresh] = first.try_emplace({st.st_dev, st.st_ino}, rel);
      if (!fresh) line << " link-of=" << it->second;
    } else if (S_ISLNK(st.st_mode)) {
      line << " -> " << stdfs::read_symlink(full, ec).string();
    }
    if (!S_ISLNK(st.st_mode)) {
      char value[64];
      ssize_t n = ::getxattr(full.c_str(), "user.model", value, sizeof value);
      if (n >= 0) line << " xattr=" << std::string(value, static_cast<size_t>(n));
    }
    out += line.str() + "\n";
  }
  return out;
}

std::string model_names(const GateModel& m) {
  std::vector<std::string> lines;
  for (const auto& [path, node] : m.tree()) {
    lines.push_back(path + (node.kind == Kind::kDir       ? "/"
                            : node.kind == Kind::kSymlink ? "@"
                                                          : ""));
  }
  std::sort(lines.begin(), lines.end());  // as plain_names sorts
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string plain_names(const std::string& dir) {
  std::vector<std::string> lines;
  for (const auto& e : stdfs::recursive_directory_iterator(dir)) {
    std::string rel = e.path().string().substr(dir.size() + 1);
    if (rel == kCopySource) continue;
    lines.push_back(rel + (e.is_symlink() ? "@" : e.is_directory() ? "/" : ""));
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream ia(a), ib(b);
  std::string la, lb;
  for (;;) {
    const bool ga = static_cast<bool>(std::getline(ia, la));
    const bool gb = static_cast<bool>(std::getline(ib, lb));
    if (!ga && !gb) return "(equal)";
    if (!ga || !gb || la != lb)
      return "'" + (ga ? la : "(end)") + "' vs '" + (gb ? lb : "(end)") + "'";
  }
}

std::string errno_name(int e) {
  if (e == 0) return "ok";
  if (e < 0) return "agent gone";
  const char* n = strerrorname_np(e);
  return n ? n : std::to_string(e);
}

gate::GateSnapshot snapshot_of(const MState& s) {
  gate::GateSnapshot snap;
  snap.has_task = true;
  snap.status = s.in_progress ? gate::TaskStatus::kInProgress : gate::TaskStatus::kPaused;
  snap.turn = s.turn;
  int n = 0;
  for (const MGrant& g : s.grants) {
    gate::Grant grant;
    grant.id = "G_" + std::to_string(++n);
    grant.turn = s.turn;
    grant.reason = "model";
    grant.paths = g.paths;
    grant.ops = g.ops;
    if (g.expired) grant.expires_ms = base::now_ms() - 1000;
    snap.grants.push_back(std::move(grant));
  }
  snap.needs_path = false;  // Gate::publish works it out
  return snap;
}

bool is_kept_op(const Op& op) {
  return op.kind == OpKind::kWriteKept || op.kind == OpKind::kTruncKept ||
         op.kind == OpKind::kChmodKept || op.kind == OpKind::kCloseKept;
}

// One world: the mount, the plain directory, the agents, the model.
class World {
 public:
  World(const RunOptions& o)
      : fs_(MountedFsOptions{fuse::FsOptions{.stable_names = o.stable_names}, 3600, true}),
        plain_(fs_.base() + "/plain"),
        model_(o.broken) {
    ::mkdir(plain_.c_str(), 0755);
    seed_dir(fs_.backing());
    seed_dir(plain_);
    for (const auto& [path, kind] : kSeed) model_.add(path, kind);
    const std::vector<std::string> globs =
        o.protect ? std::vector<std::string>{".git/hooks/**", ".git/config"}
                  : std::vector<std::string>{};
    fs_.gate().set_protected_globs(globs);
    model_.set_protected(globs);
    fs_.publish(snapshot_of(model_.state()));
    agent_ = std::make_unique<AgentProcess>(fs_.mnt(), plain_);
    if (o.two_agents) agent2_ = std::make_unique<AgentProcess>(fs_.mnt(), plain_);
  }

  const GateModel& model() const { return model_; }

  // Runs one step; "" or what diverged.
  std::string step(const Step& s, RunResult& counts) {
    if (s.kind == Step::Kind::kCompare) return compare_trees();
    if (s.kind != Step::Kind::kOp) return control(s);
    if (!s.pair) return runnable(s.op) ? judge(s.op, *agent_, agent_->run(0, s.op), counts) : "";
    // Two agents at once, in subtrees of their own: the mount answers both
    // together; the plain directory and the model then take them one by one
    // (in either order the same, as they touch no name in common).
    const bool first = runnable(s.op), second = runnable(s.op2);
    int m1 = 0, m2 = 0;
    std::thread other([&] { m2 = second ? agent2_->run(0, s.op2) : 0; });
    m1 = first ? agent_->run(0, s.op) : 0;
    other.join();
    if (std::string d = first ? judge(s.op, *agent_, m1, counts) : ""; !d.empty()) {
      return "first agent: " + d;
    }
    if (std::string d = second ? judge(s.op2, *agent2_, m2, counts) : ""; !d.empty()) {
      return "second agent: " + d;
    }
    return {};
  }

  // Whether the driver runs `op` at all: a kept descriptor's operation needs the
  // descriptor (a replay may lack the step that kept it), and a file with a name,
  // or one moved into the journal (a file whose every name the agent removed is
  // nothing the model speaks of).
  bool runnable(const Op& op) const {
    if (!is_kept_op(op)) return true;
    const std::optional<uint64_t> file = model_.kept(op.slot);
    if (!file) return false;
    return !model_.names_of(*file).empty() || model_.in_longrun(*file);
  }

  // The mount answered `m` to `op` of `agent`: compared with the model, and with
  // the plain directory where the model lets it through; the model follows.
  std::string judge(const Op& op, AgentProcess& agent, int m, RunResult& counts) {
    if (is_kept_op(op) && model_.names_of(*model_.kept(op.slot)).empty()) {
      // Moved into the journal: .longrun's, refused whatever the lease.
      if (op.kind == OpKind::kCloseKept) {
        agent.run(1, op);
        model_.apply(op);
        return m == 0 ? std::string() : "close: mount answered " + errno_name(m);
      }
      ++counts.refused;
      if (m != EACCES) {
        return "a descriptor on a file moved into the journal: refusal expected (EACCES), mount "
               "answered " +
               errno_name(m);
      }
      return {};
    }
    const Expect e = model_.expect(op);
    if (e.kernel_errno) {
      ++counts.kernel_errors;
      const int p = agent.run(1, op);
      if (m != e.kernel_errno || p != e.kernel_errno) {
        return "kernel error: model " + errno_name(e.kernel_errno) + ", mount " + errno_name(m) +
               ", plain " + errno_name(p);
      }
      return {};
    }
    if (!e.allowed && !e.either) {
      ++counts.refused;
      if (m != EACCES) return "refusal expected (EACCES), mount answered " + errno_name(m);
      return {};
    }
    if (e.either && m == EACCES) {
      ++counts.refused;
      return {};
    }
    ++counts.allowed;
    const int p = agent.run(1, op);
    if (m != p) {
      return "allowed: mount answered " + errno_name(m) + ", the plain directory " + errno_name(p);
    }
    if (p == 0) model_.apply(op);
    return {};
  }

  // Mount (through FUSE), the tree underneath, the plain directory, the model.
  std::string compare_trees() {
    const std::string plain = digest(plain_);
    const std::string under = digest(fs_.backing());
    if (under != plain) return "tree underneath differs: " + first_difference(under, plain);
    const std::string through = digest(fs_.mnt());
    if (through != plain)
      return "tree through the mount differs: " + first_difference(through, plain);
    const std::string mine = model_names(model_);
    const std::string theirs = plain_names(plain_);
    if (mine != theirs) return "model's names differ: " + first_difference(mine, theirs);
    return {};
  }

 private:
  std::string control(const Step& s) {
    MState st = model_.state();
    switch (s.kind) {
      case Step::Kind::kGrant:
        if (!st.in_progress) return {};  // the service refuses a grant then
        st.grants.push_back(s.grant);
        break;
      case Step::Kind::kTurn:
        st.turn += 1;
        st.grants.clear();
        break;
      case Step::Kind::kEndTurn:
        st.grants.clear();
        break;
      case Step::Kind::kRevoke:
        if (s.revoke < 0) {
          st.grants.clear();
        } else if (static_cast<size_t>(s.revoke) < st.grants.size()) {
          st.grants.erase(st.grants.begin() + s.revoke);
        }
        break;
      case Step::Kind::kCheckpoint:
        st.grants.clear();
        if (s.checkpoint_stop) st.in_progress = false;
        break;
      case Step::Kind::kResume:
        st.grants.clear();
        st.in_progress = true;
        break;
      case Step::Kind::kExpire:
        if (s.revoke < 0 || static_cast<size_t>(s.revoke) >= st.grants.size()) return {};
        st.grants[static_cast<size_t>(s.revoke)].expired = true;
        break;
      case Step::Kind::kOp:
      case Step::Kind::kCompare:
        break;
    }
    fs_.publish(snapshot_of(st));
    const std::vector<std::string> gone = model_.publish(st);
    for (const std::string& path : gone) {
      std::error_code ec;
      stdfs::remove(plain_ + "/" + path, ec);
    }
    return gone.empty() ? std::string() : compare_trees();
  }

  MountedFs fs_;
  std::string plain_;
  GateModel model_;
  std::unique_ptr<AgentProcess> agent_, agent2_;
};

// --- generating steps ---------------------------------------------------------

class Generator {
 public:
  Generator(uint64_t seed, bool two_agents) : rng_(seed), two_agents_(two_agents) {}

  Step next(const GateModel& m) {
    Step s = one_step(m);
    if (!two_agents_ || s.kind != Step::Kind::kOp) return s;
    // Most operations come in pairs: one in src/ by the first agent (slots 0-3),
    // one in docs/ by the second (slots 4-7), each drawn until it stays in its
    // subtree (a few tries; else the step is the first agent's alone).
    std::optional<Op> first = op_within(m, "src/", 0);
    std::optional<Op> second = op_within(m, "docs/", 4);
    if (!first || !second) return s;
    s.op = *first;
    s.op2 = *second;
    s.pair = true;
    return s;
  }

 private:
  std::optional<Op> op_within(const GateModel& m, const std::string& dir, int slot_base) {
    slot_base_ = slot_base;
    for (int i = 0; i < 40; ++i) {
      Op o = op(m);
      const bool inside = o.a.starts_with(dir) && (o.b.empty() || o.b.starts_with(dir));
      if (inside) {
        slot_base_ = 0;
        return o;
      }
    }
    slot_base_ = 0;
    return std::nullopt;
  }

 public:
  Step one_step(const GateModel& m) {
    Step s;
    const int roll = pick(1000);
    if (roll < 100) {
      s.kind = Step::Kind::kGrant;
      s.grant = grant(m);
    } else if (roll < 115) {
      s.kind = Step::Kind::kTurn;
    } else if (roll < 130) {
      s.kind = Step::Kind::kEndTurn;
    } else if (roll < 140) {
      s.kind = Step::Kind::kRevoke;
      s.revoke = m.state().grants.empty() || pick(3) == 0
                     ? -1
                     : pick(static_cast<int>(m.state().grants.size()));
    } else if (roll < 146) {
      s.kind = Step::Kind::kCheckpoint;
      s.checkpoint_stop = pick(2) == 0;
    } else if (roll < 155) {
      s.kind = Step::Kind::kResume;
    } else if (roll < 185 && !m.state().grants.empty()) {
      s.kind = Step::Kind::kExpire;
      s.revoke = pick(static_cast<int>(m.state().grants.size()));
    } else {
      s.op = op(m);
    }
    return s;
  }

 private:
  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  template <typename T>
  const T& one(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(static_cast<int>(v.size())))];
  }

  std::vector<std::string> existing(const GateModel& m, std::optional<Kind> kind = {}) {
    std::vector<std::string> out;
    for (const auto& [path, node] : m.tree()) {
      if (!kind || node.kind == *kind) out.push_back(path);
    }
    return out;
  }

  std::string any_path(const GateModel& m) {
    if (pick(6) == 0) return fresh_path(m);
    auto all = existing(m);
    return all.empty() ? fresh_path(m) : one(all);
  }

  std::string fresh_path(const GateModel& m) {
    static const std::vector<std::string> names = {"a",     "b",          "c.txt",   ".a.tmp",
                                                   "x",     "sub",        "config",  "pre-commit",
                                                   "index", "index.lock", ".b.swp~", "new"};
    std::vector<std::string> dirs = existing(m, Kind::kDir);
    dirs.push_back("");
    if (pick(20) == 0) dirs.push_back("missing");
    std::string dir = one(dirs);
    if (std::count(dir.begin(), dir.end(), '/') >= 3) dir = "src";
    return dir.empty() ? one(names) : dir + "/" + one(names);
  }

  MGrant grant(const GateModel& m) {
    static const std::vector<std::vector<std::string>> shapes = {
        {},
        {"src/a"},
        {"src/*"},
        {"src/**"},
        {"**"},
        {"src/"},
        {"docs/**"},
        {"**/*.txt"},
        {"src/sub"},
        {".git/config"},
        {".git/hooks/*"},
        {".git/**"},
        {"*"},
        {"src/sub/a", "docs/c.txt"},
        {"src/sub/"},
        {"docs/c.txt"},
        {"src/b"},
        {".git/index"},
    };
    MGrant g;
    if (pick(5) == 0) {
      g.paths = {any_path(m)};  // a literal path
    } else if (pick(4) == 0) {
      g.paths = {};  // the whole tree: the gate then resolves no path (without protected globs)
    } else {
      g.paths = one(shapes);
    }
    g.ops = pick(2) == 0 ? kAllCls : static_cast<uint8_t>(1 + pick(kAllCls));
    return g;
  }

  unsigned file_mode() {
    static const std::vector<unsigned> modes = {0644, 0600, 0755, 0444, 0640};
    return one(modes);
  }

  Op op(const GateModel& m) {
    Op o;
    o.len = pick(10000);
    o.slot = slot_base_ + pick(4);
    const int k = pick(100);
    auto kept = [&](OpKind kind) {
      if (!m.kept(o.slot)) return false;
      if (m.names_of(*m.kept(o.slot)).empty() && !m.in_longrun(*m.kept(o.slot))) return false;
      o.kind = kind;
      return true;
    };
    if (k < 14) {
      o.kind = OpKind::kCreate;
      o.a = fresh_path(m);
      o.mode = pick(2) ? 0644 : 0600;
    } else if (k < 18) {
      o.kind = OpKind::kTrunc;
      o.a = any_path(m);
    } else if (k < 26) {
      o.kind = OpKind::kAppend;
      o.a = any_path(m);
    } else if (k < 30) {
      o.kind = OpKind::kKeep;
      // Half of them on a temporary sibling, when there is one: a descriptor kept
      // across the end of its lease, onto a file that moves into the journal.
      const std::vector<std::string> siblings = m.sibling_paths();
      o.a = !siblings.empty() && pick(2) == 0 ? one(siblings) : any_path(m);
    } else if (k < 36 && kept(OpKind::kWriteKept)) {
    } else if (k < 38 && kept(OpKind::kTruncKept)) {
    } else if (k < 40 && kept(OpKind::kChmodKept)) {
      o.mode = file_mode();
    } else if (k < 41 && kept(OpKind::kCloseKept)) {
    } else if (k < 44) {
      o.kind = OpKind::kTruncate;
      o.a = any_path(m);
    } else if (k < 50) {
      o.kind = OpKind::kUnlink;
      o.a = any_path(m);
    } else if (k < 53) {
      o.kind = OpKind::kRmdir;
      o.a = any_path(m);
    } else if (k < 66) {
      o.kind = OpKind::kRename;
      o.a = any_path(m);
      o.b = pick(2) ? fresh_path(m) : any_path(m);
      const int f = pick(6);
      o.flags = f == 0 ? RENAME_NOREPLACE : f == 1 ? RENAME_EXCHANGE : 0;
    } else if (k < 70) {
      o.kind = OpKind::kLink;
      o.a = any_path(m);
      o.b = fresh_path(m);
    } else if (k < 72) {
      o.kind = OpKind::kSymlink;
      o.a = fresh_path(m);
    } else if (k < 77) {
      o.kind = OpKind::kChmod;
      o.a = any_path(m);
      auto it = m.tree().find(o.a);
      o.mode = it != m.tree().end() && it->second.kind == Kind::kDir ? (pick(2) ? 0755 : 0700)
                                                                     : file_mode();
    } else if (k < 80) {
      o.kind = OpKind::kUtimes;
      o.a = any_path(m);
    } else if (k < 85) {
      o.kind = OpKind::kMkdir;
      o.a = fresh_path(m);
      o.mode = pick(2) ? 0755 : 0700;
    } else if (k < 89) {
      o.kind = OpKind::kSetxattr;
      o.a = any_path(m);
    } else if (k < 91) {
      o.kind = OpKind::kRemovexattr;
      o.a = any_path(m);
    } else if (k < 95) {
      o.kind = OpKind::kFallocate;
      o.a = any_path(m);
    } else {
      o.kind = OpKind::kCopyRange;
      o.a = any_path(m);
    }
    return o;
  }

  std::mt19937_64 rng_;
  bool two_agents_ = false;
  int slot_base_ = 0;
};

// Replays `steps` in a fresh world; "" or the first divergence (a final tree
// comparison included).
std::string replay(const RunOptions& o, const std::vector<Step>& steps) {
  World world(o);
  RunResult counts;
  for (const Step& s : steps) {
    if (std::string d = world.step(s, counts); !d.empty()) return d;
  }
  return world.compare_trees();
}

// Removes chunks of steps while the rest still diverges (delta debugging, within
// a budget of replays).
std::vector<Step> shrink(const RunOptions& o, std::vector<Step> steps, const std::string& kind,
                         std::string* why) {
  const auto deadline = Clock::now() + std::chrono::seconds(o.shrink_seconds);
  size_t chunk = std::max<size_t>(1, steps.size() / 2);
  while (Clock::now() < deadline) {
    bool removed = false;
    for (size_t at = 0; at < steps.size() && Clock::now() < deadline;) {
      std::vector<Step> fewer(steps.begin(), steps.begin() + static_cast<long>(at));
      fewer.insert(fewer.end(),
                   steps.begin() + static_cast<long>(std::min(at + chunk, steps.size())),
                   steps.end());
      // The same kind of divergence (its first words), not just any.
      std::string d = fewer.empty() ? std::string() : replay(o, fewer);
      if (!d.empty() && d.compare(0, 16, kind, 0, 16) == 0) {
        *why = std::move(d);
        steps = std::move(fewer);
        removed = true;
      } else {
        at += chunk;
      }
    }
    if (chunk == 1 && !removed) break;
    if (!removed) chunk = std::max<size_t>(1, chunk / 2);
  }
  return steps;
}

}  // namespace

std::string describe_op(const Op& o) {
  std::ostringstream out;
  out << op_kind_name(o.kind);
  if (!o.a.empty()) out << " " << o.a;
  if (!o.b.empty()) out << " " << o.b;
  if (o.kind == OpKind::kRename && o.flags) {
    out << (o.flags & RENAME_EXCHANGE ? " EXCHANGE" : " NOREPLACE");
  }
  if (o.kind == OpKind::kKeep || o.kind == OpKind::kWriteKept || o.kind == OpKind::kTruncKept ||
      o.kind == OpKind::kChmodKept || o.kind == OpKind::kCloseKept) {
    out << " slot=" << o.slot;
  }
  if (o.kind == OpKind::kChmod || o.kind == OpKind::kChmodKept || o.kind == OpKind::kMkdir ||
      o.kind == OpKind::kCreate) {
    out << " mode=" << std::oct << o.mode << std::dec;
  }
  return out.str();
}

std::string describe(const Step& s) {
  std::ostringstream out;
  switch (s.kind) {
    case Step::Kind::kOp: {
      out << describe_op(s.op);
      if (s.pair) out << "  ||  " << describe_op(s.op2);
      break;
    }
    case Step::Kind::kGrant: {
      out << "grant";
      for (const std::string& p : s.grant.paths) out << " --path '" << p << "'";
      if (s.grant.ops != kAllCls) {
        static const char* const names[] = {"write", "create", "rename", "unlink", "attr"};
        std::string ops;
        for (int i = 0; i < 5; ++i) {
          if (s.grant.ops & (1 << i)) ops += std::string(ops.empty() ? "" : ",") + names[i];
        }
        out << " --ops " << ops;
      }
      break;
    }
    case Step::Kind::kTurn:
      out << "turn";
      break;
    case Step::Kind::kEndTurn:
      out << "end-turn";
      break;
    case Step::Kind::kRevoke:
      out << "revoke" << (s.revoke < 0 ? std::string() : " #" + std::to_string(s.revoke + 1));
      break;
    case Step::Kind::kCheckpoint:
      out << "checkpoint" << (s.checkpoint_stop ? " --status paused" : "");
      break;
    case Step::Kind::kResume:
      out << "resume";
      break;
    case Step::Kind::kExpire:
      out << "grant #" << s.revoke + 1 << " expires";
      break;
    case Step::Kind::kCompare:
      out << "compare the trees";
      break;
  }
  return out.str();
}

std::string replay_text(const std::vector<Step>& steps) {
  std::string out;
  for (const Step& s : steps) out += "  " + describe(s) + "\n";
  return out;
}

RunResult run(const RunOptions& o) {
  RunResult result;
  const auto start = Clock::now();
  std::vector<Step> steps;
  std::string divergence;
  {
    World world(o);
    Generator gen(o.seed, o.two_agents);
    for (size_t i = 0; i < o.ops; ++i) {
      steps.push_back((i + 1) % o.tree_every == 0 ? Step{.kind = Step::Kind::kCompare}
                                                  : gen.next(world.model()));
      std::string d = world.step(steps.back(), result);
      if (!d.empty()) {
        result.diverged = true;
        result.what = "step " + std::to_string(i + 1) + " (" + describe(steps.back()) + "): " + d;
        divergence = std::move(d);
        break;
      }
    }
    if (!result.diverged) {
      if (std::string d = world.compare_trees(); !d.empty()) {
        result.diverged = true;
        result.what = "at the end: " + d;
        divergence = std::move(d);
      }
    }
  }
  result.steps = steps.size();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (result.diverged) {
    result.replay = shrink(o, steps, divergence, &result.replay_what);
  }
  return result;
}

}  // namespace leasefs::test::model

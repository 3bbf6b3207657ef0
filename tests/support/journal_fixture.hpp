// The real daemon over a fresh root (RootDaemonTest), with what
// journal tests need: a turn under a lease, the control socket, and a signature
// of a tree (type, mode, owner, content hash or link target, which names are
// hard links of one another) to compare a tree with its copy byte for byte.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/control_client.hpp"
#include "tests/support/daemon_site.hpp"

namespace leasefs::test {

class JournalTest : public RootDaemonTest {
 protected:
  // sh() runs in the root from the start: before the mount, in the backing tree.
  JournalTest() : RootDaemonTest("leasefs-journal-") {
    in_root.cwd = root;
    in_root.timeout_s = 60;
  }
  void mount(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"mount", root, "--socket", sock};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = leasefs(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  nlohmann::json call(const std::string& cmd, nlohmann::json args = nlohmann::json::object()) {
    ControlClient c(sock);
    return c.call(cmd, std::move(args), 60000);
  }
  nlohmann::json ok(const std::string& cmd, nlohmann::json args = nlohmann::json::object()) {
    nlohmann::json r = call(cmd, std::move(args));
    EXPECT_TRUE(r.value("ok", false)) << cmd << ": " << r.dump();
    return r.value("result", nlohmann::json::object());
  }
  // start (once), then a new turn with an unnarrowed grant; returns the turn.
  uint64_t leased_turn() {
    if (!started) {
      ok("start", {{"description", "journal test"}});
      started = true;
    }
    nlohmann::json t = ok("turn");
    ok("grant", {{"reason", "journal test"}});
    return t.value("turn", uint64_t{0});
  }
  RunResult sh(const std::string& script) { return run_sh(script, in_root); }
  // Copies the tree as it is now (user.* attributes too) to base/before, and
  // gives the copy's signature.
  // Not .longrun, which the daemon writes while it is read and signature() leaves
  // out anyway (a `cp -a` of the whole root failed once under ASan).
  std::string copy_before() {
    const std::string to = base + "/before";
    RunResult r =
        run_sh("mkdir -p " + to + " && tar -C " + root +
               " --xattrs --xattrs-include='user.*' --exclude=./.longrun -cf - . | tar -C " + to +
               " --xattrs --xattrs-include='user.*' -xpf -");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return signature(to);
  }
  // One line per entry under `dir` (not .longrun), sorted; hard links named by
  // the first path of their inode.
  static std::string signature(const std::string& dir) {
    RunOptions o;
    o.timeout_s = 60;
    RunResult r = run_argv({"python3", "-c", R"py(
import hashlib, os, stat, sys
top = sys.argv[1]
seen = {}
out = []
for d, dirs, files in os.walk(top):
    dirs.sort()
    if d == top and '.longrun' in dirs:
        dirs.remove('.longrun')
    for name in sorted(dirs + files):
        p = os.path.join(d, name)
        rel = os.path.relpath(p, top)
        st = os.lstat(p)
        # ascii(): a name need not be UTF-8, and print() would refuse it.
        line = f"{ascii(rel)} {stat.filemode(st.st_mode)} {st.st_uid}:{st.st_gid}"
        if stat.S_ISLNK(st.st_mode):
            line += " -> " + ascii(os.readlink(p))
        if hasattr(os, 'listxattr') and not stat.S_ISLNK(st.st_mode):
            for x in sorted(os.listxattr(p, follow_symlinks=False)):
                if x.startswith('user.'):
                    line += f" {ascii(x)}={os.getxattr(p, x, follow_symlinks=False).hex()}"
        if stat.S_ISREG(st.st_mode):
            with open(p, 'rb') as f:
                line += " " + hashlib.sha256(f.read()).hexdigest()[:16]
            key = (st.st_dev, st.st_ino)
            line += f" nlink={st.st_nlink}"
            if st.st_nlink > 1:
                line += " same-as=" + seen.setdefault(key, rel)
        out.append(line)
print("\n".join(sorted(out)))
)py",
                            dir},
                           o);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output;
  }

  RunOptions in_root;
  bool started = false;
};

}  // namespace leasefs::test

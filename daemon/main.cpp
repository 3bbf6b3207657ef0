// leasefs: the daemon. `mount` serves one root, `unmount` stops it, `forget` removes
// what it kept that is not the record, `demo` tells the whole story.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/heap_tuning.hpp"
#include "daemon/cli.hpp"
#include "daemon/demo.hpp"
#include "gate/ask.hpp"
#include "protocol/arg_text.hpp"
#include "signing/key_file.hpp"

namespace {

// --ask's WAIT: a duration with its unit, or (as it always was) a number of seconds.
std::optional<int64_t> ask_wait_ms(const std::string& text) {
  std::optional<int64_t> ms;
  if (!text.empty() && text.size() <= 4 &&
      text.find_first_not_of("0123456789") == std::string::npos) {
    ms = std::stoll(text) * 1000;
  } else {
    ms = leasefs::protocol::parse_duration_ms(text);
  }
  if (!ms || *ms < 1000 || *ms > leasefs::gate::kMaxAskMs) return std::nullopt;
  return ms;
}

// `leasefs demo [--help|--version]`.
int demo_command(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      std::printf("leasefs %s\n", LEASEFS_VERSION);
      return 0;
    }
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "leasefs demo: the whole story, end to end, in a temporary directory: a real mount,\n"
          "real shell writes and the real leasectl (it must be next to leasefs or on PATH).\n"
          "Needs root and /dev/fuse; leaves nothing behind. Exits non-zero if an\n"
          "expectation fails.\n\n"
          "Usage: leasefs demo\n");
      return 0;
    }
  }
  return leasefs::daemon::run_demo(argc - 1, argv + 1);
}

// An unknown command is named, with the nearest known one.
bool known_command(const char* word) {
  const std::vector<std::string> names = {"mount", "unmount", "forget", "keygen", "demo"};
  if (std::find(names.begin(), names.end(), word) != names.end()) return true;
  const std::string near = leasefs::protocol::closest_word(word, names);
  std::fprintf(stderr, "leasefs: unknown command '%s'%s\nRun `leasefs --help` for the list.\n",
               word, near.empty() ? "" : ("; did you mean '" + near + "'?").c_str());
  return false;
}

// spdlog's levels, all of them, for --log-level's check and its help alike.
const std::vector<std::string> kLogLevels = {"trace", "debug",    "info", "warn",
                                             "error", "critical", "off"};

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// `leasefs mount`'s options, into `m` (and --ask's text into `ask_wait`). Each
// value is named for what it is (DIR, MiB, DURATION): CLI11 would say UINT, TEXT
// and print its validators' ranges in their place.
CLI::App* add_mount_command(CLI::App& app, leasefs::daemon::MountCommand& m,
                            std::string& ask_wait) {
  auto* mount = app.add_subcommand("mount", "serve ROOT, mounted over itself or at MOUNTPOINT");
  mount->add_option("ROOT", m.root, "the project directory")->required()->type_name("DIR");
  mount->add_option("MOUNTPOINT", m.mountpoint, "where to mount (default: over ROOT)")
      ->type_name("DIR");
  mount->add_option("--socket", m.socket, "control socket path")->type_name("PATH");
  mount->add_option("--socket-group", m.socket_group, "group allowed to use the socket")
      ->type_name("GROUP");
  mount->add_flag("--foreground,-f", m.foreground,
                  "stay attached, logging to stderr; tell systemd when ready");
  mount->add_option("--approver-uid", m.approver_uids, "uid allowed to grant (repeatable)")
      ->option_text("UID");
  mount->add_option("--approver-gid", m.approver_gids, "gid allowed to grant (repeatable)")
      ->option_text("GID");
  mount
      ->add_option("--agent", m.agent,
                   "the agent runs as USER: give it the socket and status.md, never the rest "
                   "of .longrun; warn about files it could not write even under a lease")
      ->type_name("USER");
  mount
      ->add_option("--log-level", m.log_level,
                   "one of " + joined(kLogLevels) + " [default: " + m.log_level + "]")
      ->check(CLI::IsMember(kLogLevels))
      ->option_text("LEVEL");
  mount
      ->add_option("-o", m.mount_options,
                   "standard mount options, comma-separated: ro, noatime, nodev, nosuid, "
                   "noexec, sync, ... (what leasefs sets itself, such as allow_other, is "
                   "refused; repeatable)")
      ->option_text("OPTIONS");
  mount->add_flag("--debug-fuse", m.debug_fuse, "log every FUSE request (very verbose)");
  mount->add_flag("--passthrough-reads", m.passthrough_reads,
                  "let the kernel read files opened read-only straight from the tree (needs "
                  "root; a write open of a file such a reader holds then fails with ETXTBSY)");
  mount->add_flag("--no-io-uring", m.no_io_uring,
                  "serve FUSE requests over /dev/fuse even where the kernel offers io_uring "
                  "(/sys/module/fuse/parameters/enable_uring is Y)");
  mount->add_flag("--allow-busy", m.allow_busy,
                  "mount over ROOT even while processes are inside it; WEAKENS THE GATE: "
                  "those processes keep writing the tree beneath without a lease");
  mount
      ->add_option("--protect", m.protect,
                   "GLOB no lease opens unless a grant names it explicitly (repeatable; "
                   "added to the defaults .git/hooks/** and .git/config; .longrun/** always)")
      ->option_text("GLOB");
  mount->add_flag("--no-default-protect", m.no_default_protect,
                  "do not protect .git/hooks/** and .git/config by default");

  mount
      ->add_option("--journal", m.journal,
                   "keep the per-turn journal that `leasectl diff` and `undo` read [default: on]")
      ->check(CLI::IsMember({"on", "off"}))
      ->option_text("on|off");
  mount
      ->add_option("--journal-max-file-mb", m.journal_max_file_mb,
                   "a file larger than this is journaled as not undoable [default: 256]")
      ->type_name("MiB");
  mount
      ->add_option(
          "--journal-max-turn-mb", m.journal_max_turn_mb,
          "past this much copied content in a turn, files are not undoable [default: 4096]")
      ->type_name("MiB");
  mount
      ->add_option("--journal-keep-turns", m.journal_keep_turns,
                   "turns whose journal is kept, at least 1 [default: 50]")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40))
      ->option_text("TURNS");
  mount
      ->add_option("--journal-keep-mb", m.journal_keep_mb,
                   "older turns are dropped while the journal is larger [default: 16384]")
      ->type_name("MiB");

  mount
      ->add_option("--signing-key", m.signing_key,
                   std::string("the key that signs the audit's head at each turn's end (root's, "
                               "mode 0600; `leasefs keygen` makes it); without one, heads go "
                               "unsigned and status says so [default: ") +
                       leasefs::signing::kDefaultKeyPath + "]")
      ->type_name("PATH");
  mount
      ->add_option("--ask", ask_wait,
                   "ask mode: a refused write waits up to DURATION (90s, 5m, at most 1h; a bare "
                   "number is seconds) for a person to approve it instead of failing at once; "
                   "--ask alone waits 60s [default: 60s]")
      ->expected(0, 1)
      ->default_str("60s")
      ->option_text("[DURATION]")
      ->check(CLI::Validator(
          [](std::string& text) {
            return ask_wait_ms(text) ? std::string()
                                     : "'" + text +
                                           "' is not a wait of 1s to 1h (e.g. 90s, 5m, or a "
                                           "number of seconds)";
          },
          "WAIT"));
  return mount;
}

}  // namespace

int main(int argc, char** argv) {
  leasefs::base::keep_freed_heap();  // as the benches do, so they measure what ships
  using namespace leasefs::daemon;
  if (argc >= 2 && std::strcmp(argv[1], "demo") == 0) return demo_command(argc, argv);
  if (argc >= 2 && argv[1][0] != '-' && !known_command(argv[1])) return 2;

  CLI::App app{"leasefs: a write-gating filesystem for coding agents"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("leasefs ") + LEASEFS_VERSION);
  app.add_subcommand("demo", "the whole story, end to end, in a temporary directory");
  MountCommand m;
  std::string ask_wait;
  auto* mount = add_mount_command(app, m, ask_wait);

  std::string unmount_path;
  auto* unmount = app.add_subcommand("unmount", "stop the daemon serving PATH and unmount it");
  unmount->add_option("PATH", unmount_path, "the mount")->required();
  bool unmount_force = false;
  unmount->add_flag("--force", unmount_force,
                    "also remove a dead mount (its daemon gone), which opens the raw tree");

  ForgetCommand forget_cmd;
  auto* forget = app.add_subcommand(
      "forget",
      "once ROOT is unmounted, remove the journal and the disk reserve from ROOT/.longrun");
  forget->add_option("ROOT", forget_cmd.root, "the unmounted root")->required();
  forget->add_flag(
      "--all", forget_cmd.all,
      "also the record (audit, signed heads, memory, ledger, state, log): .longrun whole");
  forget->add_flag("--dry-run", forget_cmd.dry_run, "say what would be removed, remove nothing");

  std::string key_path = leasefs::signing::kDefaultKeyPath;
  auto* keygen = app.add_subcommand(
      "keygen",
      "make the key that signs the audit's heads (never replaces one); print its "
      "verifier key");
  keygen
      ->add_option("--key", key_path,
                   std::string("where the key goes; its verifier key goes to PATH.pub [default: ") +
                       leasefs::signing::kDefaultKeyPath + "]")
      ->type_name("PATH");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (*mount) {
    if (!ask_wait.empty()) m.ask_ms = *ask_wait_ms(ask_wait);
    return run_mount(m);
  }
  if (*unmount) return run_unmount(unmount_path, unmount_force);
  if (*forget) return run_forget(forget_cmd);
  if (*keygen) return run_keygen(key_path);
  return 2;
}

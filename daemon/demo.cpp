// `leasefs demo`: the whole story in a temporary directory, with a real mount, real
// shell writes, the real leasectl, and no network or model. Every step prints what it
// ran and what the kernel answered; the demo exits 0 only if every expectation held,
// and removes what it made, also when interrupted.
#include "daemon/demo.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/mountinfo.hpp"
#include "base/spawn.hpp"

namespace leasefs::daemon {

namespace {

volatile sig_atomic_t g_interrupted = 0;
void on_signal(int) {
  g_interrupted = 1;
}

// Runs argv in `cwd` with stdout+stderr captured. No shell unless argv says so.
base::RunResult run(const std::vector<std::string>& argv, const std::string& cwd = "") {
  return base::run_argv(argv, {.cwd = cwd, .timeout_s = 60});
}

std::string indent(const std::string& text, const char* prefix = "      ") {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += prefix + line + "\n";
  return out;
}

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  return std::filesystem::path(std::string(buf, static_cast<size_t>(n))).parent_path();
}

// leasectl next to leasefs (installed), in the build tree, or on PATH.
std::string find_leasectl() {
  const std::string dir = self_dir();
  for (const std::string& c : {dir + "/leasectl", dir + "/../leasectl/leasectl"}) {
    if (::access(c.c_str(), X_OK) == 0) return std::filesystem::weakly_canonical(c);
  }
  return "leasectl";
}

bool is_mounted(const std::string& path) {
  for (const auto& m : base::read_mountinfo()) {
    if (m.mount_point == path) return true;
  }
  return false;
}

class Demo {
 public:
  Demo() {
    char tmpl[] = "/tmp/leasefs-demo-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    dir_ = tmpl;
    root_ = dir_ + "/project";
    socket_ = dir_ + "/control.sock";
    key_ = dir_ + "/audit-signing.key";
    leasefs_ = self_dir() + "/leasefs";
    leasectl_ = find_leasectl();
  }
  ~Demo() { cleanup(); }

  int run_story() {
    std::printf("leasefs demo in %s\n", dir_.c_str());
    std::filesystem::create_directories(root_ + "/src");
    std::ofstream(root_ + "/config.txt") << "timeout = 10\n";
    std::ofstream(root_ + "/src/pay.py") << "TIMEOUT = 10\n";

    section("0. Mount leasefs over the project itself");
    expect_ok(cmd({leasefs_, "keygen", "--key", key_}), "a key that signs each turn's audit head");
    expect_ok(cmd({leasefs_, "mount", root_, "--socket", socket_, "--signing-key", key_}),
              "the mount is ready");
    expect(is_mounted(root_), "the project path now leads to the gated view");

    section("1. A task starts read-only; a write is refused");
    expect_ok(ctl({"start", "Raise the payment timeout to 30s", "--done-when",
                   "config.txt says timeout = 30"}),
              "the task starts (memory searched first)");
    expect_refused(shell("echo 'timeout = 30' > config.txt"), "a shell redirection");
    expect(file("config.txt") == "timeout = 10\n", "config.txt is unchanged");
    expect(wait_for_status("config.txt"), "the refusal is listed in .longrun/status.md");
    shell("sed -n '/## Last refusals/,$p' .longrun/status.md");
    if (stop()) return 130;

    section("2. A grant opens writes for this turn only, and only where it says");
    expect_ok(ctl({"grant", "--reason", "raise the timeout in config.txt", "--path", "config.txt"}),
              "a person grants config.txt for this turn");
    expect_ok(shell("echo 'timeout = 30' > config.txt"), "the write inside the grant");
    expect(file("config.txt") == "timeout = 30\n", "config.txt now says timeout = 30");
    expect_refused(shell("sed -i 's/10/30/' src/pay.py"), "sed -i outside the grant");
    if (stop()) return 130;

    section("3. A checkpoint is saved to memory first, printed, and writes close");
    expect_ok(ctl({"checkpoint", "--summary", "timeout raised in config.txt", "--next",
                   "raise it in src/pay.py too", "--verified", "cat config.txt shows 30"}),
              "the checkpoint text, printed only after memory and state have it");
    expect_ok(ctl({"memory", "search", "timeout"}), "memory finds the checkpoint");
    expect_refused(shell("echo 'retries = 3' >> config.txt"), "an append after the checkpoint");
    if (stop()) return 130;

    section("4. The daemon stops and starts again; the task resumes read-only");
    expect_ok(cmd({leasefs_, "unmount", root_}), "leasefs unmount");
    expect(!is_mounted(root_), "nothing is mounted over the project");
    expect_ok(cmd({leasefs_, "mount", root_, "--socket", socket_, "--signing-key", key_}),
              "mounted again");
    expect_ok(ctl({"resume"}), "resume: next turn, last checkpoint, read-only");
    expect_refused(shell("echo 'retries = 3' >> config.txt"), "the first write after resume");
    if (stop()) return 130;

    section("5. A new grant, a write, and the task finishes");
    expect_ok(ctl({"grant", "--reason", "raise the timeout in pay.py", "--path", "src/**"}),
              "a person grants src/ for this turn");
    expect_ok(shell("sed -i 's/10/30/' src/pay.py"), "sed -i inside the grant");
    expect(file("src/pay.py") == "TIMEOUT = 30\n", "src/pay.py now says 30");
    expect_ok(ctl({"transition", "waiting_verification", "--reason", "both places changed"}),
              "the agent hands over for verification");
    expect_ok(ctl({"transition", "completed", "--reason", "checked config.txt and pay.py"}),
              "a person marks it completed");
    expect_ok(ctl({"audit", "verify", "--key", key_ + ".pub"}),
              "the audit log's hash chain is intact, and so is each turn's signed head");
    expect_ok(cmd({leasefs_, "unmount", root_}), "leasefs unmount");

    std::printf("\n%d of %d expectations held.\n", passed_, passed_ + failed_);
    return failed_ == 0 ? 0 : 1;
  }

 private:
  bool stop() {
    if (!g_interrupted) return false;
    std::printf("\ninterrupted; cleaning up\n");
    return true;
  }
  void section(const char* title) { std::printf("\n== %s\n", title); }

  base::RunResult cmd(const std::vector<std::string>& argv) {
    std::string line = "$";
    for (const auto& a : argv) line += " " + a;
    std::printf("  %s\n", line.c_str());
    base::RunResult r = run(argv, dir_);  // never from inside the mount it may unmount
    std::fputs(indent(r.output).c_str(), stdout);
    return r;
  }
  base::RunResult ctl(std::vector<std::string> args) {
    args.insert(args.begin(), {leasectl_, "--socket", socket_});
    std::string line = "$ leasectl";
    for (size_t i = 3; i < args.size(); ++i) {
      const bool quote = args[i].find_first_of(" *?") != std::string::npos;
      line += quote ? " \"" + args[i] + "\"" : " " + args[i];
    }
    std::printf("  %s\n", line.c_str());
    base::RunResult r = run(args, root_);
    std::fputs(indent(r.output).c_str(), stdout);
    return r;
  }
  base::RunResult shell(const std::string& script) {
    std::printf("  $ %s\n", script.c_str());
    base::RunResult r = run({"sh", "-c", script}, root_);
    std::fputs(indent(r.output).c_str(), stdout);
    return r;
  }
  // The daemon lists refusals in status.md shortly after they happen.
  bool wait_for_status(const std::string& needle) {
    for (int i = 0; i < 50; ++i) {
      if (file(".longrun/status.md").find(needle) != std::string::npos) return true;
      ::usleep(100'000);
    }
    return false;
  }
  std::string file(const std::string& rel) {
    std::ifstream in(root_ + "/" + rel);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  void expect(bool ok, const std::string& what) {
    std::printf("    %s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    (ok ? passed_ : failed_)++;
  }
  void expect_ok(const base::RunResult& r, const std::string& what) {
    expect(r.exit_code == 0,
           what + (r.exit_code == 0 ? "" : " (exit " + std::to_string(r.exit_code) + ")"));
  }
  void expect_refused(const base::RunResult& r, const std::string& what) {
    const bool refused =
        r.exit_code != 0 && r.output.find("Permission denied") != std::string::npos;
    expect(refused, what + (refused ? ": refused by the kernel with EACCES" : ": was NOT refused"));
  }

  void cleanup() {
    if (dir_.empty()) return;
    if (is_mounted(root_)) {
      run({leasefs_, "unmount", root_});
      if (is_mounted(root_)) run({"fusermount3", "-uz", root_});
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }

  std::string dir_, root_, socket_, key_, leasefs_, leasectl_;
  int passed_ = 0, failed_ = 0;
};

}  // namespace

int run_demo(int /*argc*/, char** /*argv*/) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    Demo demo;
    return demo.run_story();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "demo failed: %s\n", e.what());
    return 1;
  }
}

}  // namespace leasefs::daemon

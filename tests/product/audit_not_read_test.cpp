// The audit log is evidence, never resume input: `resume` and `recover` work
// without reading it. inotify reports every open and read of audit.jsonl while they
// run; a broken audit log does not change what they return.
#include <gtest/gtest.h>
#include <sys/inotify.h>

#include <filesystem>
#include <fstream>

#include "memory/ledger.hpp"
#include "memory/sqlite_memory_store.hpp"
#include "service/service.hpp"
#include "tests/support/runtime_harness.hpp"

namespace leasefs::control::test {
namespace {

// Counts opens and reads of one file while it lives.
class AccessWatch {
 public:
  explicit AccessWatch(const std::string& file) : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    EXPECT_GE(::inotify_add_watch(fd_.get(), file.c_str(), IN_OPEN | IN_ACCESS), 0) << file;
  }
  int reads_and_opens() {
    int n = 0;
    alignas(inotify_event) char buf[4096];
    for (;;) {
      ssize_t len = ::read(fd_.get(), buf, sizeof buf);
      if (len <= 0) return n;
      for (char* p = buf; p < buf + len;) {
        auto* ev = reinterpret_cast<inotify_event*>(p);
        if (ev->mask & (IN_OPEN | IN_ACCESS)) ++n;
        p += sizeof(inotify_event) + ev->len;
      }
    }
  }

 private:
  base::UniqueFd fd_;
};

void checkpointed_task(RuntimeHarness& h) {
  h.ok("start", {{"description", "rewrite the tokenizer"}});
  h.ok("grant", {{"reason", "go ahead"}});
  h.ok("checkpoint", {{"summary", "half the tokenizer is ported"}, {"next", "port the rest"}});
}

TEST(AuditIsEvidence, ResumeNeverReadsTheAuditLog) {
  RuntimeHarness h;
  checkpointed_task(h);
  const std::string audit = h.root() + "/.longrun/audit.jsonl";
  ASSERT_TRUE(std::filesystem::exists(audit));
  AccessWatch watch(audit);
  // The watch itself works: a read is seen.
  { std::ifstream(audit).get(); }
  ASSERT_GT(watch.reads_and_opens(), 0);

  auto resumed = h.ok("resume");
  EXPECT_EQ(resumed["checkpoint"]["id"], "C_0001");
  EXPECT_EQ(watch.reads_and_opens(), 0);
}

TEST(AuditIsEvidence, RecoverNeverReadsTheAuditLog) {
  RuntimeHarness h;
  checkpointed_task(h);
  h.close();
  const std::string longrun = h.root() + "/.longrun/";
  std::filesystem::remove(longrun + "state.json");
  AccessWatch watch(longrun + "audit.jsonl");

  base::UniqueFd root(::open(h.root().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  state::LongrunDir dir(root.get(), h.root());
  state::StateStore store(dir);
  memory::SqliteMemoryStore memory(dir.path("memory.db"));
  memory::Ledger ledger(dir.path("memory.db"));
  gate::Gate gate;
  report::EventBus events;
  service::Service service(store, memory, &ledger, gate, events);  // recovers: state.json is gone
  EXPECT_EQ(service.state().last_checkpoint_id, "C_0001");
  EXPECT_EQ(service.state().status, gate::TaskStatus::kPaused);
  EXPECT_EQ(watch.reads_and_opens(), 0);
}

TEST(AuditIsEvidence, ABrokenAuditLogChangesNothingAboutResume) {
  RuntimeHarness h;
  checkpointed_task(h);
  h.close();
  std::ofstream(h.root() + "/.longrun/audit.jsonl", std::ios::trunc) << "not json at all\n";
  h.open();
  auto resumed = h.ok("resume");
  EXPECT_EQ(resumed["checkpoint"]["id"], "C_0001");
  EXPECT_EQ(resumed["task"]["status"], "in_progress");
  auto verify = h.call("audit.verify");
  EXPECT_FALSE(verify.value("ok", true)) << verify.dump();
}

}  // namespace
}  // namespace leasefs::control::test

// state.log, the write-ahead record of the task state (I7): what a crash leaves
// in it, what a corrupt record does, and what a failed sync does to the leases.
#include "state/state_log.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "base/json_text.hpp"
#include "base/sha256.hpp"
#include "memory/ledger.hpp"
#include "memory/sqlite_memory_store.hpp"
#include "service/service.hpp"
#include "state/state_store.hpp"
#include "tests/support/actors.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::gate {
namespace {

using test::TempDir;

using testing::kPerson;

TaskState at_turn(uint64_t turn) {
  TaskState s;
  s.turn_index = turn;
  s.task_id = "T_1";
  s.description = "fix the payment timeout";
  s.status = TaskStatus::kInProgress;
  return s;
}

// Three states through a store that then "crashes" (its records stay in the log:
// the first went to state.json, the two after it only to the log).
void write_three(const TempDir& root) {
  state::LongrunDir dir(root.fd(), root.path());
  auto store = std::make_unique<state::StateStore>(dir);
  for (uint64_t t = 1; t <= 3; ++t) store->save(at_turn(t));
  const std::string snapshot = TempDir::read(root.longrun("state.json"));
  const std::string log = TempDir::read(root.longrun("state.log"));
  store.reset();  // a clean stop folds the log in; put both back as a crash leaves them
  TempDir::write(root.longrun("state.json"), snapshot);
  TempDir::write(root.longrun("state.log"), log);
}

uint64_t turn_after_load(const TempDir& root) {
  state::LongrunDir dir(root.fd(), root.path());
  state::StateStore store(dir);
  auto s = store.load();
  return s ? s->turn_index : 0;
}

TEST(StateLog, I7_RecordsAfterStateJsonAreReplayedInOrder) {
  TempDir root;
  write_three(root);
  const std::string log = TempDir::read(root.longrun("state.log"));
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 2);
  EXPECT_EQ(nlohmann::json::parse(TempDir::read(root.longrun("state.json")))["turn_index"], 1);
  EXPECT_EQ(turn_after_load(root), 3u);
  // Loading folded them into state.json and emptied the log.
  EXPECT_EQ(std::filesystem::file_size(root.longrun("state.log")), 0u);
  EXPECT_EQ(nlohmann::json::parse(TempDir::read(root.longrun("state.json")))["turn_index"], 3);
}

TEST(StateLog, I7_TornLastRecordIsCutAndTheStateBeforeItLoads) {
  TempDir root;
  write_three(root);
  std::string log = TempDir::read(root.longrun("state.log"));
  const size_t whole = log.size();
  const size_t second = log.find('\n') + 1;
  // A crash in the middle of the third record's write.
  TempDir::write(root.longrun("state.log"), log.substr(0, second + (whole - second) / 2));
  EXPECT_EQ(turn_after_load(root), 2u);
}

TEST(StateLog, I7_CorruptRecordBeforeTheLastRefusesToStartAndKeepsTheFile) {
  TempDir root;
  write_three(root);
  std::string log = TempDir::read(root.longrun("state.log"));
  log[log.find("fix the payment")] = 'F';  // inside the first record's payload
  TempDir::write(root.longrun("state.log"), log);
  const std::string json_before = TempDir::read(root.longrun("state.json"));
  try {
    turn_after_load(root);
    ADD_FAILURE() << "loaded past a corrupt record";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "state_corrupt");
    EXPECT_NE(std::string(e.what()).find("state.log is corrupt at line 1"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(TempDir::read(root.longrun("state.log")), log);
  EXPECT_EQ(TempDir::read(root.longrun("state.json")), json_before);
}

// A record whose checksum matches but whose state does not read (a forged or
// future record): state_corrupt naming the log, not an unexplained exception.
TEST(StateLog, I7_RecordWithAWrongTypeIsStateCorruptNamingTheLog) {
  TempDir root;
  write_three(root);
  const std::string payload = R"({"seq":9,"state":{"turn_index":"nine"}})";
  TempDir::write(root.longrun("state.log"), TempDir::read(root.longrun("state.log")) +
                                                base::sha256_hex(payload) + " " + payload + "\n");
  try {
    turn_after_load(root);
    ADD_FAILURE() << "loaded a record whose state does not read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "state_corrupt");
    EXPECT_NE(std::string(e.what()).find("state.log is corrupt: record 9"), std::string::npos)
        << e.what();
  }
}

TEST(StateLog, I7_RecordsAlreadyInStateJsonAreSkipped) {
  TempDir root;
  write_three(root);
  // A crash after state.json took record 3 and before the log was emptied.
  auto j = nlohmann::json::parse(TempDir::read(root.longrun("state.json")));
  j["turn_index"] = 7;
  j["log_seq"] = 3;
  TempDir::write(root.longrun("state.json"), j.dump());
  EXPECT_EQ(turn_after_load(root), 7u);
}

// A group commit: records appended by several threads are all durable when each
// waiter returns, and a record appended without a wait is durable too once a
// later one is.
TEST(StateLog, EveryWaiterReturnsWithItsRecordAndAllBeforeItOnDisk) {
  TempDir root;
  state::LongrunDir dir(root.fd(), root.path());
  state::StateLog log(dir);
  std::mutex order;  // appends are serialized, as the service's lock does
  uint64_t seq = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        uint64_t mine;
        {
          std::lock_guard lock(order);
          mine = ++seq;
          // Half of them are records nobody would wait for: waiting ends the gathering.
          log.append(mine, base::JsonText(nlohmann::json{{"n", mine}}),
                     mine % 2 ? state::StateLog::Sync::kGathered : state::StateLog::Sync::kNow);
        }
        log.wait_durable(mine);
      }
    });
  }
  for (auto& t : threads) t.join();
  auto records = log.read_all();
  ASSERT_EQ(records.size(), 100u);
  for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i].seq, i + 1);
}

// A record nobody waits for (a revocation) is still synced, a gathering later:
// the failing sync it meets makes the next append refuse.
TEST(StateLog, I7_ARecordNobodyWaitsForIsSyncedAllTheSame) {
  TempDir root;
  state::LongrunDir dir(root.fd(), root.path());
  state::StateLog log(dir);
  ::setenv("LEASEFS_FAILPOINT", "state_log.sync", 1);
  log.append(1, base::JsonText(nlohmann::json{{"n", 1}}), state::StateLog::Sync::kGathered);
  bool refused = false;
  for (uint64_t seq = 2; !refused && seq < 10'000; ++seq) {
    try {
      log.append(seq, base::JsonText(nlohmann::json{{"n", seq}}), state::StateLog::Sync::kGathered);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), "io_error");
      refused = true;
    }
  }
  ::unsetenv("LEASEFS_FAILPOINT");
  EXPECT_TRUE(refused) << "no sync was attempted for records nobody waited for";
}

// The same, once the syncer has nothing left to do and sleeps: a record nobody
// waits for wakes it (later ones, appended while it gathers, need not).
TEST(StateLog, I7_ARecordNobodyWaitsForWakesAnIdleSyncer) {
  TempDir root;
  state::LongrunDir dir(root.fd(), root.path());
  state::StateLog log(dir);
  log.append(1, base::JsonText(nlohmann::json{{"n", 1}}));
  log.wait_durable(1);  // the syncer is idle from here on
  ::setenv("LEASEFS_FAILPOINT", "state_log.sync", 1);
  log.append(2, base::JsonText(nlohmann::json{{"n", 2}}), state::StateLog::Sync::kGathered);
  bool refused = false;
  for (uint64_t seq = 3; !refused && seq < 10'000; ++seq) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    try {
      log.append(seq, base::JsonText(nlohmann::json{{"n", seq}}), state::StateLog::Sync::kGathered);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), "io_error");
      refused = true;
    }
  }
  ::unsetenv("LEASEFS_FAILPOINT");
  EXPECT_TRUE(refused) << "the idle syncer was not woken for a record nobody waited for";
}

// A service over a real .longrun, with a task started and on disk.
struct ServiceOnDisk {
  ServiceOnDisk() {
    service.start({"fix the payment timeout", {}, ""}, kPerson);
    service.await_durable();
  }
  // A change whose reply waits for its sync (ask mode), made while syncs fail: it
  // is refused, or never answered as durable.
  void expect_a_change_refused_or_not_durable() {
    try {
      service.set_ask(5'000, kPerson);
      service.await_durable();
      ADD_FAILURE() << "a failed sync was answered as durable";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), "io_error");
    }
  }

  TempDir root;
  state::LongrunDir dir{root.fd(), root.path()};
  state::StateStore store{dir};
  memory::SqliteMemoryStore memory{dir.path("memory.db")};
  memory::Ledger ledger{dir.path("memory.db")};
  Gate gate;
  report::EventBus events;
  service::Service service{store, memory, &ledger, gate, events};
};

// A sync that fails may have lost what was answered in memory: every lease is
// revoked, and no later change is taken (fail closed), until a restart.
TEST(StateLog, I7_ASyncThatFailsRevokesEveryLeaseAndTakesNoMoreChanges) {
  ServiceOnDisk on_disk;
  service::Service& service = on_disk.service;
  Gate& gate = on_disk.gate;
  service.grant({"edit pay.c", {}, kAllOps, std::nullopt}, kPerson);
  service.await_durable();
  ASSERT_TRUE(gate.check(Op::kWrite, "pay.c", {}).allowed);

  ::setenv("LEASEFS_FAILPOINT", "state_log.sync", 1);
  on_disk.expect_a_change_refused_or_not_durable();
  ::unsetenv("LEASEFS_FAILPOINT");
  EXPECT_FALSE(gate.check(Op::kWrite, "pay.c", {}).allowed);
  EXPECT_TRUE(service.state().grants.empty());
  EXPECT_THROW(service.grant({"once more", {}, kAllOps, std::nullopt}, kPerson), Error);
  EXPECT_FALSE(gate.check(Op::kWrite, "pay.c", {}).allowed);
}

// A grant is answered once the ledger's commit holds it: the ledger is its durable
// record, and its state record only keeps a lease that a restart revokes anyway.
// When the state log cannot sync that record, the next change is refused and no
// lease is left (fail closed).
TEST(StateLog, I7_AGrantIsAnsweredOnceTheLedgerHoldsItAndAFailedSyncLaterLeavesNoLease) {
  ServiceOnDisk on_disk;
  service::Service& service = on_disk.service;
  Gate& gate = on_disk.gate;

  ::setenv("LEASEFS_FAILPOINT", "state_log.sync", 1);
  const auto granted = service.grant({"edit pay.c", {}, kAllOps, std::nullopt}, kPerson);
  EXPECT_NO_THROW(service.await_durable()) << "a grant's reply waited for the state log's sync";
  EXPECT_TRUE(gate.check(Op::kWrite, "pay.c", {}).allowed);
  memory::Ledger reader(on_disk.dir.path("memory.db"));  // another connection: committed
  const auto entries = reader.entries(10);
  EXPECT_TRUE(std::any_of(entries.begin(), entries.end(), [&](const memory::LedgerEntry& e) {
    return e.kind == "grant" && e.subject_id == granted.grant.id;
  }));

  on_disk.expect_a_change_refused_or_not_durable();
  ::unsetenv("LEASEFS_FAILPOINT");
  EXPECT_FALSE(gate.check(Op::kWrite, "pay.c", {}).allowed);
  EXPECT_TRUE(service.state().grants.empty());
}

}  // namespace
}  // namespace leasefs::gate

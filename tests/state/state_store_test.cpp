#include "state/state_store.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::gate {
namespace {

using test::TempDir;

TaskState sample() {
  TaskState s;
  s.turn_index = 4;
  s.task_id = "T_1";
  s.description = "fix the payment timeout";
  s.status = TaskStatus::kInProgress;
  s.next_step = "edit src/pay.c";
  s.grants.push_back(Grant{.id = "G_0001", .turn = 4, .reason = "go"});
  s.history.push_back({TaskStatus::kPending, TaskStatus::kInProgress, "start", 1});
  return s;
}

void expect_corrupt(const TempDir& root, const std::string& content, const std::string& why) {
  TempDir::write(root.longrun("state.json"), content);
  state::LongrunDir dir(root.fd(), root.path());
  state::StateStore store(dir);
  try {
    store.load();
    ADD_FAILURE() << "loaded a corrupt state: " << why;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "state_corrupt") << why;
    EXPECT_NE(std::string(e.what()).find("state.json"), std::string::npos) << e.what();
  }
  // Never overwritten by the failed load.
  EXPECT_EQ(TempDir::read(root.longrun("state.json")), content) << why;
}

TEST(StateStore, I7_CorruptStateIsAnErrorNeverAnEmptyStart) {
  TempDir root;
  { state::LongrunDir dir(root.fd(), root.path()); }
  expect_corrupt(root, "{\"task_id\": \"T_1\", \"status\": ", "truncated JSON");
  expect_corrupt(root, "", "empty file");
  expect_corrupt(root, "[1,2,3]", "not an object");
  expect_corrupt(root, R"({"schema_version":1,"task_id":"T_1","status":"sleeping"})", "bad status");
  expect_corrupt(root, R"({"schema_version":1,"turn_index":"three"})", "wrong type");
  expect_corrupt(root, R"({"schema_version":99})", "newer schema");
}

TEST(StateStore, I7_SaveThenLoadRoundTripsAndLeavesNoTempFile) {
  TempDir root;
  state::LongrunDir dir(root.fd(), root.path());
  state::StateStore store(dir);
  EXPECT_FALSE(store.load().has_value());
  store.save(sample());
  auto loaded = store.load();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->task_id, "T_1");
  EXPECT_EQ(loaded->turn_index, 4u);
  EXPECT_EQ(loaded->status, TaskStatus::kInProgress);
  EXPECT_EQ(loaded->next_step, "edit src/pay.c");
  ASSERT_EQ(loaded->history.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(root.longrun(".state.json.tmp")));
  auto j = nlohmann::json::parse(TempDir::read(root.longrun("state.json")));
  EXPECT_EQ(j["schema_version"], kStateSchemaVersion);
}

TEST(StateStore, I3_LoadingRevokesAnyLease) {
  TempDir root;
  state::LongrunDir dir(root.fd(), root.path());
  state::StateStore store(dir);
  store.save(sample());
  EXPECT_NE(TempDir::read(root.longrun("state.json")).find("G_0001"), std::string::npos);
  auto loaded = store.load();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_TRUE(loaded->grants.empty());
}

TEST(StateStore, I3_OldWritableModeLoadsReadOnly) {
  TempDir root;
  { state::LongrunDir dir(root.fd(), root.path()); }
  // A state from before schema versions, whose only permission was a mode flag.
  TempDir::write(root.longrun("state.json"),
                 R"({"task_id":"T_old","description":"old","status":"in_progress",)"
                 R"("turn_index":7,"access_mode":"writable"})");
  state::LongrunDir dir(root.fd(), root.path());
  state::StateStore store(dir);
  auto loaded = store.load();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->task_id, "T_old");
  EXPECT_EQ(loaded->turn_index, 7u);
  EXPECT_TRUE(loaded->grants.empty());
}

TEST(LongrunDir, I4_SecondOwnerOfTheSameRootIsRefusedByName) {
  TempDir root;
  state::LongrunDir first(root.fd(), root.path());
  // A second process trying to own the root.
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(pipefd[0]);
    std::string msg;
    try {
      state::LongrunDir second(root.fd(), root.path());
      msg = "acquired";
    } catch (const Error& e) {
      msg = std::string(e.code()) + ": " + e.what();
    }
    (void)!::write(pipefd[1], msg.data(), msg.size());
    ::_exit(0);
  }
  ::close(pipefd[1]);
  char buf[1024] = {};
  ssize_t n = ::read(pipefd[0], buf, sizeof buf - 1);
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  std::string msg(buf, n > 0 ? static_cast<size_t>(n) : 0);
  EXPECT_NE(msg.find("root_locked"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pid " + std::to_string(::getpid())), std::string::npos) << msg;
  EXPECT_EQ(state::LongrunDir::lock_holder(root.fd()), ::getpid());
}

TEST(LongrunDir, I4_LockIsReleasedWithItsOwner) {
  TempDir root;
  { state::LongrunDir first(root.fd(), root.path()); }
  EXPECT_NO_THROW(state::LongrunDir second(root.fd(), root.path()));
}

TEST(LongrunDir, I4_EverythingLivesUnderLongrun) {
  TempDir root;
  state::LongrunDir dir(root.fd(), root.path());
  state::StateStore store(dir);
  store.save(sample());
  EXPECT_TRUE(std::filesystem::is_regular_file(root.longrun("state.json")));
  EXPECT_TRUE(std::filesystem::is_regular_file(root.longrun("lock")));
  // The /proc path reaches the same directory even if something is mounted over the root.
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path("state.json")));
  for (const auto& entry : std::filesystem::directory_iterator(root.path())) {
    EXPECT_EQ(entry.path().filename(), ".longrun");
  }
}

}  // namespace
}  // namespace leasefs::gate

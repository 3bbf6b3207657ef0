// The state log's record text (state/state_text.hpp): each grant's text is kept
// across records, and the whole must read back as the state it was made of,
// whatever changed between two records.
#include "state/state_text.hpp"

#include <gtest/gtest.h>

#include "base/json_text.hpp"

namespace leasefs::state {
namespace {

gate::Grant grant(std::string id, std::string reason) {
  gate::Grant g;
  g.id = std::move(id);
  g.turn = 3;
  g.reason = std::move(reason);
  g.approver_uid = 1000;
  g.paths = {"src/*", "docs/\"quoted\" name"};
  g.ops = gate::kAllOps;
  g.issued_ms = 1'700'000'000'123;
  return g;
}

gate::TaskState state() {
  gate::TaskState s;
  s.task_id = "T_1";
  s.description = "결제 시간 초과만 고쳐\n\t\"tabs\" and \\ slashes";
  s.keywords = {"pay", "timeout"};
  s.status = gate::TaskStatus::kInProgress;
  s.turn_index = 3;
  s.grant_seq = 2;
  s.history.push_back({gate::TaskStatus::kPending, gate::TaskStatus::kInProgress, "start", 1});
  s.grants = {grant("G_0001", "first"), grant("G_0002", "second")};
  return s;
}

void expect_reads_back(StateText& text, const gate::TaskState& s, const char* after) {
  const std::string made = text.of(s).str();
  EXPECT_EQ(nlohmann::json::parse(made), gate::to_json(s)) << after << ": " << made;
  EXPECT_EQ(gate::task_state_from_json(nlohmann::json::parse(made)), s) << after;
}

TEST(StateText, ReadsBackAsTheStateItWasMadeOf) {
  StateText text;
  gate::TaskState s;
  expect_reads_back(text, s, "no task");
  s = state();
  expect_reads_back(text, s, "a task with two grants");
  s.ask_ms = 5000;
  expect_reads_back(text, s, "an ask time");
}

TEST(StateText, FollowsEveryChangeOfTheGrantsBetweenRecords) {
  StateText text;
  gate::TaskState s = state();
  expect_reads_back(text, s, "first record");
  s.grants.push_back(grant("G_0003", "third"));
  expect_reads_back(text, s, "a grant added");
  s.grants.erase(s.grants.begin());
  expect_reads_back(text, s, "the first revoked");
  std::swap(s.grants[0], s.grants[1]);
  expect_reads_back(text, s, "reordered");
  // A kept text is never reused for a grant that differs from the one it was
  // made of, even under the same id.
  s.grants[0].reason = "another reason";
  s.grants[1].expires_ms = 1'700'000'600'000;
  s.grants[1].paths.clear();
  expect_reads_back(text, s, "the same ids, changed");
  s.grants.clear();
  expect_reads_back(text, s, "every grant revoked");
  s.grants.push_back(grant("G_0001", "the first id again"));
  expect_reads_back(text, s, "an id seen before, its text dropped since");
  s.grants.push_back(s.grants.back());
  expect_reads_back(text, s, "one grant twice");
}

}  // namespace
}  // namespace leasefs::state

// Appends keep only the old length (Entry::appended): a byte appended to a
// 10 MiB file costs the journal an index line, not a 10 MiB copy, and undo and
// diff still put back and show exactly what the file had, whatever follows the
// append: an edit in the same turn, an edit through another name, a later turn.
#include <gtest/gtest.h>

#include "tests/support/journal_fixture.hpp"

namespace leasefs::test {
namespace {

constexpr uint64_t kBig = uint64_t{10} << 20;

class JournalAppend : public JournalTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(sh("head -c " + std::to_string(kBig) +
                 " /dev/urandom > big && echo last >> big && "
                 "mkdir -p d && ln big d/other && echo line > small")
                  .exit_code,
              0);
    mount();
  }
  uint64_t turn_bytes(uint64_t turn) {
    RunResult r =
        sh("du -sb --apparent-size .longrun/journal/" + std::to_string(turn) + " | cut -f1");
    return std::stoull(r.output);
  }
  // Ends `turn`, undoes it, and checks the tree against `before`.
  void undo_and_compare(uint64_t turn, const std::string& before) {
    ok("turn");
    nlohmann::json u = ok("undo", {{"turn", turn}, {"force", true}});
    EXPECT_TRUE(u.value("applied", false)) << u.dump();
    EXPECT_EQ(signature(root), before);
  }
};

TEST_F(JournalAppend, AnAppendKeepsOnlyTheOldLength) {
  const std::string before = copy_before();
  const uint64_t turn = leased_turn();
  ASSERT_EQ(sh("echo appended >> big && printf more >> big").exit_code, 0);
  EXPECT_LT(turn_bytes(turn), uint64_t{64} << 10) << "the journal copied the file";
  const std::string text = ok("diff", {{"turn", turn}}).value("text", std::string());
  EXPECT_NE(text.find("big"), std::string::npos) << text;
  undo_and_compare(turn, before);
}

TEST_F(JournalAppend, AnEditAfterAnAppendKeepsTheBytesBeforeTheAppend) {
  const std::string before = copy_before();
  const uint64_t turn = leased_turn();
  ASSERT_EQ(sh("echo appended >> big && truncate -s 100 big && echo x >> big").exit_code, 0);
  undo_and_compare(turn, before);
}

TEST_F(JournalAppend, AnEditThroughAnotherNameAfterAnAppend) {
  const std::string before = copy_before();
  const uint64_t turn = leased_turn();
  ASSERT_EQ(sh("echo appended >> big && truncate -s 5 d/other").exit_code, 0);
  undo_and_compare(turn, before);
}

TEST_F(JournalAppend, AnAppendThenAnEditInTheNextTurn) {
  const std::string before = copy_before();
  const uint64_t first = leased_turn();
  ASSERT_EQ(sh("echo one >> small && echo one >> big").exit_code, 0);
  leased_turn();
  ASSERT_EQ(sh("truncate -s 3 small && echo two >> small && truncate -s 3 big").exit_code, 0);
  // The first turn's diff shows what it appended, from the second turn's copy.
  const std::string text = ok("diff", {{"turn", first}}).value("text", std::string());
  EXPECT_NE(text.find(" line\n+one\n"), std::string::npos) << text;
  // Undone out of order (force): the first turn alone puts back what it had.
  undo_and_compare(first, before);
}

TEST_F(JournalAppend, ARestartWithinTheTurnStillKeepsTheBytesBeforeAnEdit) {
  const std::string before = copy_before();
  const uint64_t turn = leased_turn();
  ASSERT_EQ(sh("echo appended >> big").exit_code, 0);
  ASSERT_EQ(leasefs({"unmount", root}).exit_code, 0);
  mount();
  ok("grant", {{"reason", "again"}});
  ASSERT_EQ(sh("truncate -s 7 big").exit_code, 0);
  undo_and_compare(turn, before);
}

}  // namespace
}  // namespace leasefs::test

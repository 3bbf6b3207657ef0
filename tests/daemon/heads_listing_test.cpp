// audit.heads' listing of the signed heads file: after a size, bounded in count
// and bytes, each entry exactly as the file holds it, stopping at damage.
#include "daemon/heads_listing.hpp"

#include <gtest/gtest.h>

#include <string>

#include "base/sha256.hpp"
#include "signing/ed25519_key.hpp"
#include "signing/heads_file.hpp"
#include "signing/signed_note.hpp"
#include "signing/tree_head.hpp"

namespace leasefs::daemon {
namespace {

const signing::Ed25519Key kKey = signing::Ed25519Key::generate();

// The file's entry for a head of `size` (its hash: the SHA-256 of the size).
std::string entry(uint64_t size) {
  const std::string hex = base::sha256_hex(std::to_string(size));
  const std::string text =
      signing::tree_head_text({"leasefs/test/srv", size, *signing::hash_bytes(hex)});
  return signing::heads_file_entry(signing::sign_note(text, kKey, "leasefs/test"));
}

TEST(HeadsListing, HeadsAfterASizeInOrderEachAsTheFileHoldsIt) {
  const std::string file = entry(3) + entry(7) + entry(12);
  const nlohmann::json out = list_signed_heads(file, 3, 10, 1 << 20);
  ASSERT_EQ(out["heads"].size(), 2u);
  EXPECT_EQ(out["heads"][0]["size"], 7);
  EXPECT_EQ(out["heads"][0]["root_hash"], base::sha256_hex("7"));
  EXPECT_EQ(out["heads"][0]["checkpoint"].get<std::string>() + "\n", entry(7));
  EXPECT_EQ(out["heads"][1]["size"], 12);
  EXPECT_EQ(out["entries"], 3);
  EXPECT_FALSE(out["more"].get<bool>());
  EXPECT_FALSE(out.contains("damaged"));
  EXPECT_TRUE(list_signed_heads(file, 12, 10, 1 << 20)["heads"].empty());
  EXPECT_TRUE(list_signed_heads("", 0, 10, 1 << 20)["heads"].empty());
}

TEST(HeadsListing, AReplyIsBoundedInCountAndBytesAndSaysThereIsMore) {
  const std::string file = entry(1) + entry(2) + entry(3);
  nlohmann::json out = list_signed_heads(file, 0, 2, 1 << 20);
  ASSERT_EQ(out["heads"].size(), 2u);
  EXPECT_TRUE(out["more"].get<bool>());
  // One entry's worth of bytes: one head a reply, never none.
  out = list_signed_heads(file, 0, 10, entry(1).size());
  ASSERT_EQ(out["heads"].size(), 1u);
  EXPECT_TRUE(out["more"].get<bool>());
  out = list_signed_heads(file, 0, 10, 1);
  ASSERT_EQ(out["heads"].size(), 1u);
  EXPECT_EQ(out["heads"][0]["size"], 1);
}

TEST(HeadsListing, TheListingStopsAtAnEntryThatIsNoCheckpointAndSaysWhere) {
  std::string bad = entry(5);
  bad.replace(bad.find('\n') + 1, 1, "x");  // the size line: "x" is no size
  const std::string file = entry(4) + bad + entry(6);
  const nlohmann::json out = list_signed_heads(file, 0, 10, 1 << 20);
  ASSERT_EQ(out["heads"].size(), 1u);
  EXPECT_EQ(out["heads"][0]["size"], 4);
  EXPECT_NE(out.value("damaged", "").find("line 7: "), std::string::npos) << out.dump();
  // A file cut short after a whole entry: that entry is listed, the cut said.
  const nlohmann::json cut = list_signed_heads(entry(4) + "leasefs/test/srv\n9", 0, 10, 1 << 20);
  ASSERT_EQ(cut["heads"].size(), 1u);
  EXPECT_NE(cut.value("damaged", "").find("cut short"), std::string::npos) << cut.dump();
}

}  // namespace
}  // namespace leasefs::daemon

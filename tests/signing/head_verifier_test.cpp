// The verifier of signed heads on chains and heads files made here, one finding
// at a time: what a central verifier would see in shipped copies.
#include "signing/head_verifier.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "signing/heads_file.hpp"
#include "signing/signed_note.hpp"
#include "signing/tree_head.hpp"

namespace leasefs::signing {
namespace {

using Kind = ChainLink::Kind;

const std::string kOrigin = "leasefs/test/srv/project";

std::string hex_hash(uint64_t seq) {
  const char digits[] = "0123456789abcdef";
  std::string out(64, '0');
  for (size_t i = 0; i < out.size(); ++i) out[i] = digits[(seq * 7 + i * 13) % 16];
  return out;
}

class HeadVerifierTest : public ::testing::Test {
 protected:
  // A chain of `n` records; `kinds` says which are what.
  void chain_of(uint64_t n) {
    chain.clear();
    for (uint64_t seq = 1; seq <= n; ++seq) chain.push_back({seq, hex_hash(seq)});
  }
  void mark(uint64_t seq, Kind kind, uint64_t signed_size = 0) {
    chain[seq - 1].kind = kind;
    chain[seq - 1].signed_size = signed_size;
  }
  std::string head(uint64_t size, const std::string& hash, const Ed25519Key& by,
                   const std::string& origin = kOrigin) {
    return heads_file_entry(
        sign_note(tree_head_text({origin, size, *hash_bytes(hash)}), by, "leasefs/test"));
  }
  std::string head(uint64_t size) { return head(size, hex_hash(size), key); }
  HeadsReport verify(const std::string& heads) { return verify_heads(chain, heads, vkey, kOrigin); }
  // A turn ending at 3 and at 6, each followed by its signed head's record.
  void two_turns() {
    chain_of(8);
    mark(3, Kind::kTurnEnd);
    mark(4, Kind::kHeadSigned, 3);
    mark(6, Kind::kTurnEnd);
    mark(7, Kind::kHeadSigned, 6);
  }

  Ed25519Key key = Ed25519Key::generate();
  VerifierKey vkey = VerifierKey::of("leasefs/test", key.public_key());
  std::vector<ChainLink> chain;
};

TEST_F(HeadVerifierTest, AHeadPerTurnVerifies) {
  two_turns();
  const HeadsReport r = verify(head(3) + head(6));
  EXPECT_TRUE(r.ok()) << r.findings.front().message;
  EXPECT_EQ(r.heads, 2u);
  EXPECT_EQ(r.last_size, 6u);
}

TEST_F(HeadVerifierTest, WrongKeyIsABadSignature) {
  two_turns();
  const Ed25519Key other = Ed25519Key::generate();
  const HeadsReport r = verify(head(3) + head(6, hex_hash(6), other));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.findings.front().kind, FindingKind::kBadSignature);
  EXPECT_EQ(r.findings.front().line, 7u);  // the second entry's first line
}

TEST_F(HeadVerifierTest, AHashTheChainDoesNotHaveIsAMismatch) {
  two_turns();
  const HeadsReport r = verify(head(3) + head(6, hex_hash(5), key));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.findings.front().kind, FindingKind::kMismatch);
  EXPECT_EQ(r.findings.front().size, 6u);
}

TEST_F(HeadVerifierTest, AHeadPastTheChainIsAMismatch) {
  two_turns();
  const HeadsReport r = verify(head(3) + head(6) + head(9, hex_hash(9), key));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.findings.front().kind, FindingKind::kMismatch);
  EXPECT_EQ(r.findings.front().size, 9u);
}

TEST_F(HeadVerifierTest, AnotherLogsHeadIsAMismatch) {
  two_turns();
  const HeadsReport r = verify(head(3) + head(6, hex_hash(6), key, "leasefs/test/other"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.findings.front().kind, FindingKind::kMismatch);
}

TEST_F(HeadVerifierTest, SizesThatGoBack) {
  two_turns();
  const HeadsReport r = verify(head(6) + head(3));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.findings.front().kind, FindingKind::kWentBack);
}

TEST_F(HeadVerifierTest, TwoHeadsOfOneSizeThatDisagreeAreAFork) {
  two_turns();
  const HeadsReport r = verify(head(3) + head(6) + head(6, hex_hash(2), key));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.findings.front().kind, FindingKind::kFork);
}

TEST_F(HeadVerifierTest, AHeadTheChainSaysWasSignedAndIsMissingIsAGap) {
  two_turns();
  const HeadsReport r = verify(head(6));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.findings.front().kind, FindingKind::kGap);
  EXPECT_EQ(r.findings.front().size, 3u);
}

TEST_F(HeadVerifierTest, ATurnThatEndedAfterTheLastHeadIsSilence) {
  two_turns();
  mark(8, Kind::kTurnEnd);
  const HeadsReport r = verify(head(3) + head(6));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.findings.front().kind, FindingKind::kSilence);
  EXPECT_EQ(r.findings.front().size, 8u);
}

TEST_F(HeadVerifierTest, NoHeadsAtAllAfterATurnIsSilence) {
  chain_of(3);
  mark(2, Kind::kTurnEnd);
  mark(3, Kind::kHeadUnsigned);
  const HeadsReport r = verify("");
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings.front().kind, FindingKind::kSilence);
  EXPECT_NE(r.findings.front().message.find("no key"), std::string::npos);
}

TEST_F(HeadVerifierTest, ACutOrDamagedEntryIsMalformed) {
  two_turns();
  const std::string heads = head(3) + head(6);
  for (const std::string& damaged :
       {heads.substr(0, heads.size() - 1), heads + "\n", heads + "x\n",
        std::string(heads).replace(heads.find("\xe2\x80\x94"), 1, "-")}) {
    const HeadsReport r = verify(damaged);
    ASSERT_FALSE(r.ok());
    const bool malformed_or_bad = std::any_of(r.findings.begin(), r.findings.end(), [](auto& f) {
      return f.kind == FindingKind::kMalformed;
    });
    EXPECT_TRUE(malformed_or_bad) << r.findings.front().message;
  }
}

TEST(ChainLinks, WhatEndsATurnAndWhatRecordsAHead) {
  for (const auto& [type, to] :
       std::vector<std::pair<std::string, std::string>>{{"turn", ""},
                                                        {"end-turn", ""},
                                                        {"resume", ""},
                                                        {"transition", "completed"},
                                                        {"transition", "failed"}}) {
    EXPECT_TRUE(ends_a_turn(type, to)) << type << " " << to;
    EXPECT_EQ(chain_link(1, hex_hash(1), type, to, 0).kind, Kind::kTurnEnd) << type << " " << to;
  }
  for (const auto& [type, to] : std::vector<std::pair<std::string, std::string>>{
           {"checkpoint", ""}, {"transition", "paused"}, {"grant", ""}, {"start", ""}}) {
    EXPECT_FALSE(ends_a_turn(type, to)) << type << " " << to;
  }
  const ChainLink head = chain_link(7, hex_hash(7), "head_signed", "", 6);
  EXPECT_EQ(head.kind, Kind::kHeadSigned);
  EXPECT_EQ(head.signed_size, 6u);
  EXPECT_EQ(chain_link(8, hex_hash(8), "head_unsigned", "", 7).kind, Kind::kHeadUnsigned);
}

// Any one byte of the heads file changed, and the verifier finds something.
TEST_F(HeadVerifierTest, F5_EveryByteOfTheHeadsFileMatters) {
  two_turns();
  const std::string heads = head(3) + head(6);
  ASSERT_TRUE(verify(heads).ok());
  for (size_t i = 0; i < heads.size(); ++i) {
    std::string changed = heads;
    changed[i] = static_cast<char>(changed[i] ^ 0x01);
    EXPECT_FALSE(verify(changed).ok()) << "byte " << i << " changed and nothing was found";
  }
}

}  // namespace
}  // namespace leasefs::signing

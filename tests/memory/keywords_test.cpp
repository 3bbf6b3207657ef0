#include "memory/keywords.hpp"

#include <gtest/gtest.h>

#include "memory/text_tokens.hpp"

namespace leasefs::memory {
namespace {

using Words = std::vector<std::string>;

TEST(Keywords, DropsStopWordsAndLowercases) {
  EXPECT_EQ(extract_keywords("Please fix the Payment timeout in the checkout API"),
            (Words{"payment", "timeout", "checkout", "api"}));
}

TEST(Keywords, DropsSingleCharacters) {
  EXPECT_EQ(extract_keywords("x y z retry"), (Words{"retry"}));
}

TEST(Keywords, KeepsCjkRuns) {
  EXPECT_EQ(extract_keywords("결제 시간 초과를 수정한다"),
            (Words{"결제", "시간", "초과를", "수정한다"}));
  EXPECT_EQ(extract_keywords("支付超时问题"), (Words{"支付超时问题"}));
  EXPECT_EQ(extract_keywords("決済のタイムアウトを直す"), (Words{"決済のタイムアウトを直す"}));
}

TEST(Keywords, SplitsScriptBoundaries) {
  EXPECT_EQ(extract_keywords("API를 고친다"), (Words{"api", "고친다"}));
}

TEST(Keywords, DeduplicatesKeepingFirstSeenOrder) {
  EXPECT_EQ(extract_keywords("Timeout retry TIMEOUT backoff retry"),
            (Words{"timeout", "retry", "backoff"}));
}

TEST(Keywords, CapsAtMax) {
  EXPECT_EQ(extract_keywords("alpha beta gamma delta epsilon", 3),
            (Words{"alpha", "beta", "gamma"}));
  EXPECT_TRUE(extract_keywords("alpha beta", 0).empty());
}

TEST(Keywords, EmptyAndPunctuationOnly) {
  EXPECT_TRUE(extract_keywords("").empty());
  EXPECT_TRUE(extract_keywords("... !!! ???, —「」").empty());
}

TEST(Keywords, NeverSplitsMultibyteSequences) {
  // Invalid bytes act as separators; every keyword stays valid UTF-8.
  const std::string text = "caf\xc3\xa9 \xff\xfe 시간\xe3\x81 d\xc3";
  const auto words = extract_keywords(text);
  EXPECT_EQ(words, (Words{"café", "시간"}));
}

TEST(TextTokens, CountsCodePointsAndScript) {
  const auto tokens = tokenize_text("시간 timeout 超时");
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_TRUE(tokens[0].cjk);
  EXPECT_EQ(tokens[0].code_points, 2u);
  EXPECT_FALSE(tokens[1].cjk);
  EXPECT_EQ(tokens[1].code_points, 7u);
  EXPECT_TRUE(tokens[2].cjk);
  EXPECT_EQ(tokens[2].text, "超时");
}

}  // namespace
}  // namespace leasefs::memory

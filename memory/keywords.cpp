#include "memory/keywords.hpp"

#include <algorithm>
#include <array>

#include "memory/text_tokens.hpp"

namespace leasefs::memory {
namespace {

// Function words and the filler of requests to an agent ("please fix ...").
// Sorted, for binary search.
constexpr std::array<std::string_view, 96> kStopWords = {
    "a",    "about", "after", "again", "all",  "also",   "am",     "an",   "and",   "any",
    "are",  "as",    "at",    "be",    "been", "before", "but",    "by",   "can",   "could",
    "did",  "do",    "does",  "done",  "each", "fix",    "for",    "from", "get",   "had",
    "has",  "have",  "he",    "her",   "here", "him",    "his",    "how",  "i",     "if",
    "in",   "into",  "is",    "it",    "its",  "just",   "let",    "lets", "make",  "may",
    "me",   "might", "more",  "most",  "must", "my",     "need",   "no",   "not",   "now",
    "of",   "on",    "only",  "or",    "our",  "out",    "please", "same", "she",   "should",
    "so",   "some",  "than",  "that",  "the",  "their",  "them",   "then", "there", "these",
    "they", "this",  "those", "to",    "too",  "up",     "us",     "was",  "we",    "were",
    "what", "when",  "which", "will",  "with", "would",
};

bool is_stop_word(std::string_view word) {
  return std::binary_search(kStopWords.begin(), kStopWords.end(), word);
}

}  // namespace

std::vector<std::string> extract_keywords(std::string_view text, std::size_t max) {
  std::vector<std::string> keywords;
  for (TextToken& token : tokenize_text(text)) {
    if (keywords.size() >= max) break;
    if (token.code_points < 2) continue;
    std::string word = ascii_lower(token.text);
    if (!token.cjk && is_stop_word(word)) continue;
    if (std::find(keywords.begin(), keywords.end(), word) != keywords.end()) continue;
    keywords.push_back(std::move(word));
  }
  return keywords;
}

}  // namespace leasefs::memory

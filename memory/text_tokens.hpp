// Splitting text into search terms, shared by keyword extraction and query
// building. Works on UTF-8 code points, never on bytes, so a multibyte sequence
// is never cut. A term is a run of letters/digits; punctuation, symbols and
// spaces separate terms; a change between CJK and non-CJK script also separates
// them ("API를" gives "API" and "를"). Invalid UTF-8 bytes act as separators.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace leasefs::memory {

struct TextToken {
  std::string text;             // the original bytes of the term
  bool cjk = false;             // Hangul, Kana or Han
  std::size_t code_points = 0;  // length in code points
};

std::vector<TextToken> tokenize_text(std::string_view text);

// ASCII letters lowercased; every other byte unchanged (UTF-8 safe).
std::string ascii_lower(std::string_view text);

}  // namespace leasefs::memory

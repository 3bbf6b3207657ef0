#include "memory/text_tokens.hpp"

#include <cstdint>

namespace leasefs::memory {
namespace {

enum class CharClass { separator, word, cjk };

// Decodes one UTF-8 sequence at text[pos]. Returns its length in bytes, or 0 for
// an invalid sequence (overlong, surrogate, out of range, truncated).
std::size_t decode_utf8(std::string_view text, std::size_t pos, char32_t& out) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[pos + i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  char32_t value = 0;
  char32_t minimum = 0;
  if (lead < 0x80) {
    out = lead;
    return 1;
  } else if ((lead & 0xe0) == 0xc0) {
    length = 2, value = lead & 0x1f, minimum = 0x80;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3, value = lead & 0x0f, minimum = 0x800;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4, value = lead & 0x07, minimum = 0x10000;
  } else {
    return 0;
  }
  if (pos + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    value = (value << 6) | (byte(i) & 0x3f);
  }
  if (value < minimum || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return 0;
  out = value;
  return length;
}

bool in(char32_t c, char32_t lo, char32_t hi) {
  return c >= lo && c <= hi;
}

bool is_cjk(char32_t c) {
  return in(c, 0x1100, 0x11ff) ||    // Hangul Jamo
         in(c, 0x3040, 0x30ff) ||    // Hiragana, Katakana
         in(c, 0x3130, 0x318f) ||    // Hangul compatibility Jamo
         in(c, 0x31f0, 0x31ff) ||    // Katakana phonetic extensions
         in(c, 0x3400, 0x4dbf) ||    // CJK extension A
         in(c, 0x4e00, 0x9fff) ||    // CJK unified ideographs
         in(c, 0xa960, 0xa97f) ||    // Hangul Jamo extended A
         in(c, 0xac00, 0xd7ff) ||    // Hangul syllables, Jamo extended B
         in(c, 0xf900, 0xfaff) ||    // CJK compatibility ideographs
         in(c, 0xff66, 0xff9f) ||    // halfwidth Katakana
         in(c, 0x20000, 0x3ffff) ||  // CJK extensions B and later
         c == 0x3005;                // 々 (iteration mark)
}

bool is_separator(char32_t c) {
  if (c < 0x80) {
    return !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
  }
  return in(c, 0x80, 0xbf) ||       // Latin-1 controls and punctuation
         c == 0xd7 || c == 0xf7 ||  // × ÷
         in(c, 0x2000, 0x2bff) ||   // punctuation, symbols, arrows, math, shapes
         in(c, 0x2e00, 0x2e7f) ||   // supplemental punctuation
         in(c, 0x3000, 0x3004) ||   // CJK space and symbols
         in(c, 0x3006, 0x303f) ||   // CJK brackets and punctuation
         in(c, 0xfe10, 0xfe6f) ||   // vertical and small forms
         in(c, 0xff00, 0xff0f) ||   // fullwidth punctuation
         in(c, 0xff1a, 0xff20) ||   //
         in(c, 0xff3b, 0xff40) ||   //
         in(c, 0xff5b, 0xff65) ||   //
         in(c, 0xfff0, 0xffff) ||   // specials
         in(c, 0x1f000, 0x1faff);   // emoji and pictographs
}

CharClass classify(char32_t c) {
  if (is_cjk(c)) return CharClass::cjk;
  if (is_separator(c)) return CharClass::separator;
  return CharClass::word;
}

}  // namespace

std::vector<TextToken> tokenize_text(std::string_view text) {
  std::vector<TextToken> tokens;
  TextToken current;
  CharClass current_class = CharClass::separator;
  const auto flush = [&] {
    if (!current.text.empty()) tokens.push_back(std::move(current));
    current = TextToken{};
    current_class = CharClass::separator;
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    char32_t c = 0;
    std::size_t length = decode_utf8(text, pos, c);
    const CharClass cls = length == 0 ? CharClass::separator : classify(c);
    if (length == 0) length = 1;  // skip one invalid byte
    if (cls == CharClass::separator) {
      flush();
    } else {
      if (cls != current_class) flush();
      current_class = cls;
      current.cjk = cls == CharClass::cjk;
      current.text.append(text.substr(pos, length));
      ++current.code_points;
    }
    pos += length;
  }
  flush();
  return tokens;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& ch : out) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  return out;
}

}  // namespace leasefs::memory

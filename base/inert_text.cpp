#include "base/inert_text.hpp"

#include <cstdint>
#include <cstdio>

namespace leasefs::base {

namespace {

// Code points shown escaped beyond the control characters.
bool invisible_or_reordering(uint32_t cp) {
  return (cp >= 0x200B && cp <= 0x200F) ||  // zero-width space/joiners, LRM, RLM
         (cp >= 0x2028 && cp <= 0x202E) ||  // line/paragraph separators, bidi embeddings
         (cp >= 0x2060 && cp <= 0x2069) ||  // word joiner, invisible operators, isolates
         cp == 0x061C || cp == 0xFEFF || cp == 0x180E;
}

// Length of the UTF-8 sequence at `s` and its code point; 0 when not valid.
size_t decode(std::string_view s, uint32_t* cp) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = b(0);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || n > s.size()) return 0;
  uint32_t v = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(i) & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[n] || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) return 0;
  *cp = v;
  return n;
}

}  // namespace

std::string inert(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
  while (!text.empty()) {
    uint32_t cp = 0;
    size_t n = decode(text, &cp);
    if (n == 0) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[0]));
      out += buf;
      text.remove_prefix(1);
      continue;
    }
    if (cp == '\\') {
      out += "\\\\";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02x", cp);
      out += buf;
    } else if ((cp >= 0x80 && cp <= 0x9F) || invisible_or_reordering(cp)) {
      std::snprintf(buf, sizeof buf, "\\u{%04x}", cp);
      out += buf;
    } else {
      out.append(text.data(), n);
    }
    text.remove_prefix(n);
  }
  return out;
}

}  // namespace leasefs::base

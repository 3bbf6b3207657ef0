#include "service/md_quote.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace leasefs::gate {

namespace {

// Code points that hide, reorder or break text, beyond the control characters.
bool invisible_or_reordering(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) ||      // C1 controls, including the 0x9b CSI
         (cp >= 0x200B && cp <= 0x200F) ||  // zero-width space/joiners, LRM, RLM
         (cp >= 0x2028 && cp <= 0x202E) ||  // line/paragraph separators, bidi embeddings
         (cp >= 0x2060 && cp <= 0x2069) ||  // word joiner, invisible operators, isolates
         cp == 0x061C || cp == 0xFEFF || cp == 0x180E;
}

// Length of the UTF-8 sequence at the start of `s` and its code point; 0 when
// it is not valid UTF-8 (overlong, surrogate, past U+10FFFF, cut short).
size_t decode_utf8(std::string_view s, uint32_t* cp) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  const size_t n = c < 0x80           ? 1
                   : (c >> 5) == 0x6  ? 2
                   : (c >> 4) == 0xE  ? 3
                   : (c >> 3) == 0x1E ? 4
                                      : 0;
  if (n == 0 || n > s.size()) return 0;
  uint32_t v = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(i) & 0x3F);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[n] || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) return 0;
  *cp = v;
  return n;
}

}  // namespace

std::string escape_untrusted(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
  while (!text.empty()) {
    uint32_t cp = 0;
    const size_t n = decode_utf8(text, &cp);
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
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      out += buf;
    } else if (invisible_or_reordering(cp)) {
      std::snprintf(buf, sizeof buf, "\\u{%04x}", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(text.data(), n);
    }
    text.remove_prefix(n);
  }
  return out;
}

std::string md_quote(std::string_view text) {
  const std::string body = escape_untrusted(text);
  size_t longest = 0;
  size_t run = 0;
  for (char c : body) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  return fence + " " + body + " " + fence;
}

}  // namespace leasefs::gate

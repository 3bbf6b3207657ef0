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

// One step over `text`: the length of what comes next (a code point, or one
// byte that is not UTF-8) and whether a person must see it escaped.
struct Step {
  size_t len;
  uint32_t cp;
  bool valid;
  bool escaped;
};

Step next(std::string_view text) {
  uint32_t cp = 0;
  const size_t n = decode(text, &cp);
  if (n == 0) return {1, 0, false, true};
  const bool escaped = cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||
                       invisible_or_reordering(cp) || cp == '\\';
  return {n, cp, true, escaped};
}

}  // namespace

std::string inert(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
  while (!text.empty()) {
    const Step s = next(text);
    if (!s.escaped) {
      out.append(text.data(), s.len);
    } else if (!s.valid) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[0]));
      out += buf;
    } else if (s.cp == '\\') {
      out += "\\\\";
    } else if (s.cp == '\n') {
      out += "\\n";
    } else if (s.cp == '\t') {
      out += "\\t";
    } else if (s.cp == '\r') {
      out += "\\r";
    } else if (s.cp < 0x80) {
      std::snprintf(buf, sizeof buf, "\\x%02x", s.cp);
      out += buf;
    } else {
      std::snprintf(buf, sizeof buf, "\\u{%04x}", s.cp);
      out += buf;
    }
    text.remove_prefix(s.len);
  }
  return out;
}

std::string quote_name(std::string_view name) {
  bool plain = true;
  for (std::string_view rest = name; plain && !rest.empty();) {
    const Step s = next(rest);
    plain = !s.escaped && !(s.valid && s.cp == '"');
    rest.remove_prefix(s.len);
  }
  if (plain) return std::string(name);
  std::string out = "\"";
  char buf[8];
  while (!name.empty()) {
    const Step s = next(name);
    static constexpr std::string_view kNamed = "\a\b\t\n\v\f\r\"\\";
    static constexpr std::string_view kLetter = "abtnvfr\"\\";
    if (!s.escaped && s.cp != '"') {
      out.append(name.data(), s.len);
    } else if (size_t k = s.len == 1 ? kNamed.find(name[0]) : std::string_view::npos;
               k != std::string_view::npos) {
      out += '\\';
      out += kLetter[k];
    } else {
      for (size_t i = 0; i < s.len; ++i) {
        std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(name[i]));
        out += buf;
      }
    }
    name.remove_prefix(s.len);
  }
  return out + "\"";
}

std::string inert_line(std::string_view line) {
  for (std::string_view rest = line; !rest.empty();) {
    const Step s = next(rest);
    if (s.escaped && !(s.valid && s.cp == '\\')) return inert(line);
    rest.remove_prefix(s.len);
  }
  return std::string(line);
}

}  // namespace leasefs::base

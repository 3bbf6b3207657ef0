#include "service/md_quote.hpp"

#include <algorithm>
#include <cctype>

#include "base/inert_text.hpp"

namespace leasefs::service {

namespace {

bool alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// Whether inert text, put inline after text the daemon wrote, could be read as
// anything but itself (md_quote.hpp, step 2).
bool needs_span(std::string_view body) {
  if (body.empty() || body.front() == ' ' || body.back() == ' ') return true;
  if (std::string_view("-+=#>").find(body.front()) != std::string_view::npos) return true;
  if (body.find("www.") != std::string_view::npos) return true;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '_') {
      // Intraword, `_` never opens or closes emphasis (CommonMark 6.2).
      if (i == 0 || i + 1 == body.size() || !alnum(body[i - 1]) || !alnum(body[i + 1])) return true;
    } else if (std::string_view("`*[]<>&\\~|!@:$").find(c) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string md_quote(std::string_view text) {
  const std::string body = base::inert(text);
  if (!needs_span(body)) return body;
  size_t longest = 0;
  size_t run = 0;
  for (char c : body) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  return fence + " " + body + " " + fence;
}

}  // namespace leasefs::service

#include "service/md_quote.hpp"

#include <algorithm>

#include "base/inert_text.hpp"

namespace leasefs::service {

std::string md_quote(std::string_view text) {
  const std::string body = base::inert(text);
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

// Keyword extraction for records and task starts: the distinctive words of a
// piece of text, in the order they first appear.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace leasefs::memory {

// Lowercases ASCII, splits into terms (see text_tokens.hpp), drops English stop
// words and terms shorter than 2 code points, keeps CJK runs whole, removes
// duplicates keeping the first, and returns at most max keywords.
std::vector<std::string> extract_keywords(std::string_view text, std::size_t max = 8);

}  // namespace leasefs::memory

// Parsing untrusted JSON with every bound checked while the text is read, before
// any value exists that something could walk recursively.
//
// nlohmann's parser is iterative, but much of what one does with the result is
// not (dump, comparison, copies): a line of 100,000 '[' would crash the daemon in
// the first of those. So the SAX events are checked as they arrive and the DOM is
// built from them only while every bound holds: nesting depth, number of values,
// length of each string and key. Besides, a line is refused when it repeats a key
// in one object (which of the two would count is a guess), holds a NUL in a string,
// or a number outside what a double or a 64-bit integer can hold.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

namespace leasefs::protocol {

struct JsonBounds {
  size_t max_depth = 32;             // nested arrays and objects
  size_t max_values = 4096;          // every value, keys excluded
  size_t max_string_bytes = 65'536;  // one string value, after unescaping
  size_t max_key_bytes = 256;        // one object key
};

// Throws Error: bad_json for text that is not JSON, bad_request for JSON
// past a bound or with one of the forbidden shapes above. The message says which
// bound, where (byte offset), and what to do.
nlohmann::json parse_bounded_json(std::string_view text, const JsonBounds& bounds = {});

}  // namespace leasefs::protocol

// The signed heads file, <root>/.longrun/signed_heads: append-only, one signed
// checkpoint after another, each followed by one empty line:
//
//   leasefs/<machine>/<root>          <- line 1 of the first entry
//   12
//   <base64 root hash>
//
//   — leasefs/<machine> <base64 signature>
//                                     <- the empty line that ends the entry
//   leasefs/<machine>/<root>          <- the next entry
//   ...
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leasefs::signing {

struct HeadsEntry {
  size_t line = 0;   // 1-based line of its first line
  std::string note;  // the signed note, without the empty line after it
};

struct HeadsFile {
  std::vector<HeadsEntry> entries;  // the well-formed entries before any damage
  // Where the file stops being entries (1-based line) and why; 0 when it does not.
  size_t bad_line = 0;
  std::string why;
};

HeadsFile split_heads_file(std::string_view text);

// What is appended for `note`.
inline std::string heads_file_entry(std::string_view note) {
  return std::string(note) + "\n";
}

}  // namespace leasefs::signing

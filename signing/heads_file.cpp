#include "signing/heads_file.hpp"

#include "signing/signed_note.hpp"

namespace leasefs::signing {

HeadsFile split_heads_file(std::string_view text) {
  HeadsFile out;
  size_t line_no = 0;
  size_t pos = 0;
  // The next line without its newline; false at the end, or (with `cut`) for a
  // last line that has none.
  auto next = [&](std::string_view* line, bool* cut) {
    if (pos >= text.size()) return false;
    const size_t end = text.find('\n', pos);
    ++line_no;
    if (end == std::string_view::npos) {
      *line = text.substr(pos);
      pos = text.size();
      *cut = true;
      return true;
    }
    *line = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  };
  auto stop = [&](size_t line, std::string why) {
    out.bad_line = line;
    out.why = std::move(why);
    return out;
  };
  while (pos < text.size()) {
    HeadsEntry entry;
    entry.line = line_no + 1;
    std::string_view line;
    bool cut = false;
    // The note's text: lines up to the empty one.
    size_t text_lines = 0;
    for (;;) {
      if (!next(&line, &cut) || cut) return stop(line_no, "the entry is cut short");
      if (line.empty()) break;
      entry.note.append(line).push_back('\n');
      ++text_lines;
    }
    if (text_lines == 0) return stop(line_no, "an empty line where an entry should begin");
    entry.note.push_back('\n');
    // Signature lines up to the empty line that ends the entry.
    size_t signatures = 0;
    for (;;) {
      if (!next(&line, &cut) || cut) return stop(line_no, "the entry is cut short");
      if (line.empty()) break;
      if (line.substr(0, kSignatureLinePrefix.size()) != kSignatureLinePrefix) {
        return stop(line_no, "a line where a signature line should be");
      }
      entry.note.append(line).push_back('\n');
      ++signatures;
    }
    if (signatures == 0) return stop(line_no, "an entry without a signature line");
    out.entries.push_back(std::move(entry));
  }
  return out;
}

}  // namespace leasefs::signing

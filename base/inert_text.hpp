// Text chosen by the agent (reasons, paths, process names, task and checkpoint
// text, command lines), made inert wherever a person reads it: one printable
// line in which nothing can move a terminal's cursor, recolour, retitle, reorder
// (bidi) or hide text, or start a new line. leasectl prints it so, and
// status.md quotes it (service/md_quote.hpp). leasectl's --json output is never
// passed through this: it keeps the exact data.
#pragma once

#include <string>
#include <string_view>

namespace leasefs::base {

// Free text: control characters (C0, DEL, C1 including the 0x9b CSI), bidi
// overrides and isolates, zero-width characters and line/paragraph separators
// are shown as escapes (\n, \x1b, \u{202e}); bytes that are not UTF-8 as \xNN;
// a backslash as \\ so that an escape shown is never ambiguous.
std::string inert(std::string_view text);

// A name (a path, a rename or symlink target, an xattr name) as git shows it
// with core.quotePath: as it is when it holds nothing to escape; otherwise in
// double quotes with C escapes: \" \\ \a \b \t \n \v \f \r, and \ooo (octal)
// for every other byte of what inert() escapes. A name can then never start a
// line of its own, and a quoted one reads back with any C-string unquoter.
std::string quote_name(std::string_view name);

// One line of text the daemon composed, in which the strings the agent chose
// are names already quoted (quote_name) or contents (a diff's lines): kept as
// it is when nothing but a backslash in it would be escaped, so a quoted name
// reads as git shows it; otherwise the whole line through inert().
std::string inert_line(std::string_view line);

}  // namespace leasefs::base

// Text chosen by the agent (reasons, paths, process names, task and checkpoint
// text, command lines), made inert wherever a person reads it: one printable
// line in which nothing can move a terminal's cursor, recolour, retitle, reorder
// (bidi) or hide text, or start a new line. leasectl prints it so, and
// status.md quotes it (service/md_quote.hpp). Control characters (C0, DEL, C1 including the 0x9b
// CSI), bidi overrides and isolates, zero-width characters and line/paragraph separators are shown
// as escapes (\n, \x1b, \u{202e}); bytes that are not UTF-8 as \xNN; a backslash as
// \\ so that an escape shown is never ambiguous. leasectl's --json output is
// never passed through this: it keeps the exact data.
#pragma once

#include <string>
#include <string_view>

namespace leasefs::base {

std::string inert(std::string_view text);

}  // namespace leasefs::base

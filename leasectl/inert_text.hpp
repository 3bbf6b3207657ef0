// Text from the daemon, much of it chosen by the agent (reasons, paths, process
// names, task and checkpoint text), made inert for a terminal: nothing in it can
// move the cursor, recolour, retitle, reorder (bidi) or hide text, or start a new
// line. Control characters (C0, DEL, C1 including the 0x9b CSI), bidi overrides
// and isolates, zero-width characters and line/paragraph separators are shown as
// escapes (\n, \x1b, \u{202e}); bytes that are not UTF-8 as \xNN; a backslash as
// \\ so that an escape shown is never ambiguous. --json output is never passed
// through this: it keeps the exact data.
#pragma once

#include <string>
#include <string_view>

namespace leasefs::leasectl {

std::string inert(std::string_view text);

}  // namespace leasefs::leasectl

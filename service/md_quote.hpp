// Text chosen by someone other than an approver (reasons, task and checkpoint
// text, file and process names, who asked), made inert for Markdown: status.md
// shows it inline after text the daemon wrote, so it can never begin a line, a
// heading, a list item, a fence, an HTML comment or a link, and nothing in it
// is markup. Like git's quoting of paths, only what needs it is quoted: a plain
// name reads plainly (`- open src/pay.cfg by sh (pid 479): no_lease`).
//
// The scheme, in order:
//  1. escape (base::inert, the same as leasectl's terminal output): a backslash
//     becomes \\; newline, CR and tab become \n \r \t; other C0 controls, DEL
//     and bytes that are not UTF-8 become \xNN; C1 controls, bidi embeddings,
//     overrides and isolates, zero-width characters, line and paragraph
//     separators and the BOM become \u{XXXX}. The result is one line of
//     printable text.
//  2. quote, when the result could be read as Markdown: empty, a space at
//     either end, a first character that starts a block (- + = # >), any of
//     ` * [ ] < > & \\ ~ | ! @ : $ (code, emphasis, links, images, autolinks,
//     HTML, entities, escapes, strikethrough, tables, e-mail and URL autolinks,
//     math), "www.", or a `_` that is not between two letters or digits. Then
//     it is wrapped in a run of backticks one longer than the longest run
//     inside, with a space on each side (CommonMark strips exactly one space on
//     each side, so text that begins or ends with a backtick stays intact).
// The same text always gives the same result, so a reader can copy it back.
#pragma once

#include <string>
#include <string_view>

namespace leasefs::service {

// Steps 1 and 2: inline text for status.md (and any Markdown the
// daemon writes).
std::string md_quote(std::string_view text);

}  // namespace leasefs::service

// The one inert renderer: names quoted as git quotes them (core.quotePath),
// free text escaped, and lines the daemon composed kept as they are.
#include "base/inert_text.hpp"

#include <gtest/gtest.h>

namespace leasefs::base {
namespace {

TEST(InertText, PlainNamesAreShownAsTheyAre) {
  for (const std::string name : {"src/pay.cfg", "a b/c d.txt", "caf\xc3\xa9.md", "x -> y"}) {
    EXPECT_EQ(quote_name(name), name);
  }
}

TEST(InertText, NamesWithControlBytesOrInvalidUtf8AreQuotedAsGitDoes) {
  EXPECT_EQ(quote_name("a\ndeleted file b"), "\"a\\ndeleted file b\"");
  EXPECT_EQ(quote_name("t\tr\r"), "\"t\\tr\\r\"");
  EXPECT_EQ(quote_name("\x1b[2J"), "\"\\033[2J\"");
  EXPECT_EQ(quote_name("\xff\xfe.c"), "\"\\377\\376.c\"");
  EXPECT_EQ(quote_name("q\"b\\s"), "\"q\\\"b\\\\s\"");
  EXPECT_EQ(quote_name(std::string("n\0l", 3)), "\"n\\000l\"");
  // C1 controls and bidi overrides: their UTF-8 bytes in octal.
  EXPECT_EQ(quote_name("\xc2\x9b"
                       "1m"),
            "\"\\302\\2331m\"");
  EXPECT_EQ(quote_name("gnp\xe2\x80\xae.exe"), "\"gnp\\342\\200\\256.exe\"");
}

TEST(InertText, ComposedLinesKeepQuotedNamesAndEscapeWhatATerminalActsOn) {
  EXPECT_EQ(inert_line("renamed a -> \"z\\n--- a/x\""), "renamed a -> \"z\\n--- a/x\"");
  EXPECT_EQ(inert_line("+path\\to"), "+path\\to");
  EXPECT_EQ(inert_line("+\x1b[2J\\"), "+\\x1b[2J\\\\");
  EXPECT_EQ(inert("a\\b\n"), "a\\\\b\\n");
}

}  // namespace
}  // namespace leasefs::base

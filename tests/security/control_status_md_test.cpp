// Attack class: misleading whoever reads .longrun/status.md (a person, or the
// next agent that reads it as instructions). The agent picks a task description,
// a request reason (it becomes the grant's reason when approved), a checkpoint's
// next step, file names it is refused on and its own process name, each built to
// start a heading, a list item, a fence, an HTML comment or a link, to hide text
// (bidi override, ESC sequences) or to break the file (invalid UTF-8). Every line
// of status.md must still begin with text the daemon wrote, and outside the
// quoted spans nothing the agent chose may appear.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "service/md_quote.hpp"
#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

// Valid UTF-8 (what the control socket accepts).
const std::string kHostile =
    "fine\n# heading\n- item\n```\nfenced\n<!-- hidden\n-->\n[x](http://e) ``tick` "
    "\xe2\x80\xae"
    "txt.exe \x1b[2J\x1b]0;title\x07 \xc2\x9b"
    "31m\r\n    indented code\n> quote";
// A file name: no '/' or NUL, but newlines and bytes that are not UTF-8.
const std::string kHostileName =
    "\n# name\n- item\n```\n<!--x-->[l](e)`\xe2\x80\xae\x1b[2J\xff\xfe";
// A process name (15 bytes at most).
const std::string kHostileComm = "\n# p`<!--\x1b[";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines the daemon writes, each up to where agent text may begin.
const std::vector<std::regex>& daemon_lines() {
  static const std::vector<std::regex> kLines = {
      std::regex(R"(^$)"),
      std::regex(R"(^# leasefs status$)"),
      std::regex(R"(^## (Lease for turn \d+|Last refusals|How to ask for a lease|Audit)$)"),
      std::regex(R"(^Task: \S.*)"),
      std::regex(R"(^Status: [a-z_]+$)"),
      std::regex(R"(^Turn: \d+$)"),
      std::regex(R"(^Next step: \S.*)"),
      std::regex(R"(^- G_\d+: \S.*)"),
      std::regex(R"(^- [a-z_]+ \S.*)"),
      std::regex(R"(^None(\.|: the tree is read-only\..*)$)"),
      std::regex(R"(^No task\. Writes are refused .*)"),
      std::regex(R"(^Do not look for another way to write\. .*)"),
      std::regex(R"(^    leasectl request --reason .*)"),
      std::regex(R"(^A lease lasts for the current turn only; ask again in the next one\.$)"),
      std::regex(R"(^Signed heads: \S.*)"),
  };
  return kLines;
}

// The line with its inline code spans removed (CommonMark: a run of n backticks
// opens a span closed by the next run of exactly n).
std::string outside_code_spans(const std::string& line) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] != '`') {
      out += line[i++];
      continue;
    }
    size_t n = 0;
    while (i + n < line.size() && line[i + n] == '`') ++n;
    size_t j = i + n;
    bool closed = false;
    while (j < line.size()) {
      if (line[j] != '`') {
        ++j;
        continue;
      }
      size_t m = 0;
      while (j + m < line.size() && line[j + m] == '`') ++m;
      if (m == n) {
        closed = true;
        i = j + m;
        break;
      }
      j += m;
    }
    if (!closed) {  // an unclosed run is literal text: keep it, the check below fails
      out.append(line, i, n);
      i += n;
    }
  }
  return out;
}

void expect_daemon_structure(const std::string& md) {
  ASSERT_FALSE(md.empty());
  for (const std::string& bad :
       {std::string("\x1b"), std::string("\xc2\x9b"), std::string("\xe2\x80\xae"),
        std::string("\r"), std::string("\xff"), std::string(1, '\0'), std::string("\x07")}) {
    EXPECT_EQ(md.find(bad), std::string::npos) << md;
  }
  std::istringstream lines(md);
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    bool known = false;
    for (const auto& re : daemon_lines()) known = known || std::regex_search(line, re);
    EXPECT_TRUE(known) << "line " << n << " was not written by the daemon: [" << line << "]\n"
                       << md;
    const std::string bare = outside_code_spans(line);
    for (const std::string markup : {"<!--", "-->", "](", "```", "<", "[", "\\"}) {
      EXPECT_EQ(bare.find(markup), std::string::npos)
          << "markup " << markup << " outside a code span on line " << n << ": [" << line << "]";
    }
    EXPECT_EQ(std::count(bare.begin(), bare.end(), '`'), 0) << line;
  }
}

bool eventually_contains(const std::string& path, const std::string& needle) {
  for (int i = 0; i < 500; ++i) {
    if (slurp(path).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(ControlStatusMd, AgentTextNeverBecomesMarkdownStructure) {
  ControlDaemon d;
  ASSERT_EQ(::mkdir((d.root() + "/open").c_str(), 0777), 0);
  ::chmod((d.root() + "/open").c_str(), 0777);
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  const std::string md_path = d.root() + "/.longrun/status.md";

  pid_t agent = spawn_agent([&] {
    ControlClient c(d.socket());
    if (!c.call("start", {{"description", kHostile}}).value("ok", false)) return 1;
    if (!c.call("request", {{"reason", kHostile}, {"paths", {"src/**"}}}).value("ok", false)) {
      return 2;
    }
    return 0;
  });
  ASSERT_EQ(wait_child(agent, 10'000), 0);
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("approve", {{"id", "R_0001"}}).value("ok", false));

  // Refused writes under a hostile file name, from a process with a hostile name.
  agent = spawn_agent([&] {
    ::prctl(PR_SET_NAME, kHostileComm.c_str(), 0, 0, 0);
    int fd = ::open((d.root() + "/open/" + kHostileName).c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) {
      ::close(fd);
      return 1;  // the gate let it through: nothing to test
    }
    return 0;
  });
  ASSERT_EQ(wait_child(agent, 10'000), 0);
  ASSERT_TRUE(eventually_contains(md_path, "## Last refusals\n- ")) << slurp(md_path);
  {
    SCOPED_TRACE("task, grant and refusal");
    expect_daemon_structure(slurp(md_path));
  }
  // The text is all there, escaped, for a person to read.
  std::string md = slurp(md_path);
  EXPECT_NE(md.find("\\n# heading\\n- item"), std::string::npos) << md;
  EXPECT_NE(md.find("\\u{202e}"), std::string::npos) << md;
  EXPECT_NE(md.find("\\xff\\xfe"), std::string::npos) << md;
  EXPECT_NE(md.find("\\x1b[2J"), std::string::npos) << md;

  agent = spawn_agent([&] {
    ControlClient c(d.socket());
    return c.call("checkpoint", {{"summary", kHostile}, {"next", kHostile}}).value("ok", false) ? 0
                                                                                                : 1;
  });
  ASSERT_EQ(wait_child(agent, 10'000), 0);
  ASSERT_TRUE(eventually_contains(md_path, "Next step: ")) << slurp(md_path);
  {
    SCOPED_TRACE("checkpoint");
    expect_daemon_structure(slurp(md_path));
  }
}

// What the control socket refuses (NUL, invalid UTF-8) can still reach the
// quoting through a file or process name: the quote of any byte string is one
// inline code span that holds no control byte and gives the text back escaped.
TEST(ControlStatusMd, QuotingHoldsForAnyBytes) {
  const std::string nul_text = std::string("a\0b", 3) + "\n# h\xff`` ```` -->";
  const std::string q = service::md_quote(nul_text);
  EXPECT_EQ(q, "````` a\\x00b\\n# h\\xff`` ```` --> `````");
  expect_daemon_structure("Next step: " + q + "\n");
  EXPECT_EQ(service::md_quote("`"), "`` ` ``");
  EXPECT_EQ(service::md_quote("a\\nb"), "` a\\\\nb `");
}

// Like git's quoting of paths: plain text reads plainly, and only text that
// Markdown could read as markup is put in a code span.
TEST(ControlStatusMd, OnlyWhatNeedsQuotingIsQuoted) {
  for (const std::string plain : {"src/pay.cfg", "no_lease", "T_20261206_001122_ab12", "sh",
                                  "fix the parser (again)", "a.b-c"}) {
    EXPECT_EQ(service::md_quote(plain), plain);
  }
  for (const std::string markup :
       {"*bold*", "_em_",    "x_",       "a`b",       "[l](e)", "<b>",  "&amp;",  "~~s~~",
        "a|b",    "![i](e)", "http://e", "www.e.com", "a@b.c",  "$x$",  "- item", "# h",
        "> q",    "+ x",     "=",        "",          " pad",   "pad ", "a\\b",   "a\nb"}) {
    const std::string q = service::md_quote(markup);
    EXPECT_EQ(q.front(), '`') << markup;
    expect_daemon_structure("Next step: " + q + "\n");
  }
}

}  // namespace
}  // namespace leasefs::test

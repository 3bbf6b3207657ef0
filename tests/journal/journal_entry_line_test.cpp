// An index line is written field by field (Entry::line) instead of through a
// JSON object per entry. It must be exactly the text the JSON library gives for
// the same object (compact, keys sorted): the entry's hash is of these bytes,
// and a reader parses them back to the same entry.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "journal/journal.hpp"

namespace leasefs::journal {
namespace {

using nlohmann::json;

std::vector<Entry> varied_entries() {
  std::vector<Entry> out;
  Entry plain;
  plain.seq = 1;
  plain.turn = 7;
  plain.path = "src/a.c";
  plain.kind = EntryKind::kAbsent;
  out.push_back(plain);

  Entry file = plain;
  file.kind = EntryKind::kFile;
  file.mode = 0100644;
  file.uid = 65534;
  file.gid = 4294967295u;
  file.atime_ns = -1;
  file.mtime_ns = 1733450000123456789;
  file.size = UINT64_MAX;
  file.ino = 123456789012345;
  file.nlink = 2;
  file.blob = "b1";
  file.xattrs = {{"user.b", "00ff"}, {"user.a", ""}, {"security.capability", "0100000002"}};
  out.push_back(file);

  Entry odd = file;  // every string a name can hold that JSON escapes
  odd.path = std::string("d/\"quoted\"\\back\nline\ttab\x01\x1f/\xc3\xa9t\xc3\xa9/\xe2\x80\xa8");
  odd.kind = EntryKind::kOther;
  odd.undoable = false;
  odd.why = "not a file, directory or symlink";
  odd.origin = "undo:3";
  out.push_back(odd);

  Entry link = plain;
  link.kind = EntryKind::kSymlink;  // an empty target is still written
  out.push_back(link);
  link.target = "../x \"y\"";
  out.push_back(link);

  Entry rename = plain;
  rename.kind = EntryKind::kRename;
  rename.target = "src/b.c";
  out.push_back(rename);
  Entry dir = plain;
  dir.kind = EntryKind::kDir;
  dir.mode = 040755;
  out.push_back(dir);
  Entry leftover = plain;
  leftover.kind = EntryKind::kLeftover;
  leftover.blob = "b9";
  out.push_back(leftover);
  Entry bytes = link;  // names and targets that are not UTF-8
  bytes.path = "src/\xff\xfe";
  bytes.target = "t\xfc/\xc3";
  bytes.xattrs = {{"hex:757365722e61fd", "31"}};
  out.push_back(bytes);
  return out;
}

TEST(JournalEntryLine, IsTheTextTheJsonLibraryGivesForTheSameObject) {
  for (const Entry& e : varied_entries()) {
    const std::string line = e.line();
    EXPECT_EQ(json::parse(line).dump(), line) << line;
  }
}

TEST(JournalEntryLine, ReadsBackAsTheSameEntry) {
  for (const Entry& e : varied_entries()) {
    const Entry back = Entry::from_json(json::parse(e.line()));
    EXPECT_EQ(back.line(), e.line());
    EXPECT_EQ(back.path, e.path);
    EXPECT_EQ(back.target, e.target);
    EXPECT_EQ(back.kind, e.kind);
    EXPECT_EQ(back.xattrs, e.xattrs);
    EXPECT_EQ(back.size, e.size);
    EXPECT_EQ(back.atime_ns, e.atime_ns);
    EXPECT_EQ(back.undoable, e.undoable);
  }
}

// A name is bytes: one that is not UTF-8 is written as text for people (with
// U+FFFD) and exactly in hex, and read back as the same bytes.
TEST(JournalEntryLine, ANameThatIsNotUtf8IsKeptExactlyInHex) {
  Entry e;
  e.kind = EntryKind::kSymlink;
  e.path = "src/\xff\xfe";
  e.target = "t\xfc";
  const std::string line = e.line();
  EXPECT_NE(line.find(R"("path_hex":"7372632ffffe")"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("target_hex":"74fc")"), std::string::npos) << line;
  const Entry back = Entry::from_json(json::parse(line));
  EXPECT_EQ(back.path, e.path);
  EXPECT_EQ(back.target, e.target);
  Entry plain;
  plain.path = "src/\xc3\xa9";  // UTF-8: no hex
  EXPECT_EQ(plain.line().find("_hex"), std::string::npos) << plain.line();
}

}  // namespace
}  // namespace leasefs::journal

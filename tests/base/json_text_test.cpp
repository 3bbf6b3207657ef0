// ObjectText writes an object member by member; its text must be exactly what
// json_text() gives for the same object: the audit chain hashes these bytes and
// `audit verify` recomputes them from the parsed object.
#include "base/json_text.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace leasefs::base {
namespace {

using nlohmann::json;

TEST(ObjectText, IsWhatTheJsonLibraryGivesForTheSameObject) {
  const std::string odd = "d/\"q\"\\b\nl\tt\x01\x1f/\xc3\xa9/\xe2\x80\xa8/\xff\xfe";
  ObjectText text;
  json value = json::object();
  // Set out of key order, one key twice, through every overload.
  auto both = [&](const char* key, const auto& v) {
    text.set(key, v);
    value[key] = v;
  };
  both("type", "journal");                  // const char*
  both("path", odd);                        // std::string, escapes, not UTF-8
  both("ts_ms", INT64_C(-1));               // a negative integer
  both("undoable", false);                  // bool
  both("hash", std::string_view("ab\"c"));  // std::string_view
  both("turn", UINT64_MAX);                 // the largest integer
  both("kind", "absent");
  both("path", std::string("again"));           // replaced
  both("seq", 0);                               // int
  both("a_b", json(nullptr));                   // anything else, by the library
  both("odd key \"\n", json::array({1, "x"}));  // a key that needs escapes
  EXPECT_EQ(text.str(), json_text(value));
  EXPECT_EQ(JsonText(text).str(), JsonText(value).str());
  EXPECT_TRUE(text.contains("seq"));
  EXPECT_TRUE(text.contains("a_b"));
  EXPECT_TRUE(text.contains("odd key \"\n"));
  EXPECT_FALSE(text.contains("why"));
}

TEST(ObjectText, AnEmptyObject) {
  EXPECT_EQ(ObjectText().str(), "{}");
}

// Texts made once and put into others (state/state_text.hpp) read back as the
// library's own for the whole.
TEST(JsonText, TextsMadeAlreadyReadBackAsTheWhole) {
  const json inner = {{"id", "G_1"}, {"paths", {"src/*", "q\"\\"}}, {"n", nullptr}};
  ArrayText array;
  EXPECT_EQ(JsonText(array).str(), "[]");
  array.push(JsonText(inner)).push(JsonText(json(3)));
  const JsonText items(array);
  EXPECT_EQ(json::parse(items.str()), json::array({inner, 3}));
  json object = {{"z", 1}, {"a", "x\n\"y\""}, {"m", {{"k", false}}}};
  const JsonText whole = JsonText::with_member(object, "odd \"key\"", items);
  object["odd \"key\""] = json::array({inner, 3});
  EXPECT_EQ(json::parse(whole.str()), object);
  EXPECT_EQ(json::parse(JsonText::with_member(json::object(), "g", items).str()),
            json({{"g", json::array({inner, 3})}}));
  // Never a second member of one name, nor a member of what is not an object.
  EXPECT_THROW(JsonText::with_member(object, "z", items), std::invalid_argument);
  EXPECT_THROW(JsonText::with_member(json::array(), "g", items), std::invalid_argument);
}

TEST(ObjectText, TakesATextMadeAlready) {
  ObjectText text;
  text.set("seq", 4).set_text("state", JsonText(json{{"b", "\u00e9"}}));
  EXPECT_EQ(text.str(), json_text(json{{"seq", 4}, {"state", {{"b", "\u00e9"}}}}));
}

}  // namespace
}  // namespace leasefs::base

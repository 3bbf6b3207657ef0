#include "protocol/request.hpp"

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "base/json_text.hpp"
#include "control/commands.hpp"
#include "protocol/arg_text.hpp"
#include "protocol/command_registry.hpp"

namespace leasefs::control {
namespace {

std::string code_of(std::string_view line, nlohmann::json* id = nullptr) {
  try {
    protocol::parse_request(line, id);
  } catch (const Error& e) {
    return std::string(e.code());
  }
  return "ok";
}

std::string message_of(std::string_view line) {
  try {
    protocol::parse_request(line);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RequestParse, FullRequest) {
  auto r = protocol::parse_request(
      R"({"id":7,"cmd":"grant","args":{"reason":"fix A"},"idempotency_key":"k1"})");
  EXPECT_EQ(r.id, 7);
  EXPECT_EQ(r.cmd, "grant");
  EXPECT_EQ(r.args["reason"], "fix A");
  ASSERT_TRUE(r.idempotency_key);
  EXPECT_EQ(*r.idempotency_key, "k1");
}

TEST(RequestParse, ArgsAndIdAreOptional) {
  auto r = protocol::parse_request(R"({"cmd":"status"})");
  EXPECT_TRUE(r.id.is_null());
  EXPECT_TRUE(r.args.is_object());
  EXPECT_TRUE(r.args.empty());
  EXPECT_FALSE(r.idempotency_key);
}

TEST(RequestParse, StringIdsAreEchoed) {
  EXPECT_EQ(protocol::parse_request(R"({"id":"abc","cmd":"turn"})").id, "abc");
}

TEST(RequestParse, NotJsonIsBadJson) {
  EXPECT_EQ(code_of("hello"), "bad_json");
  EXPECT_EQ(code_of("{\"cmd\":"), "bad_json");
  EXPECT_EQ(code_of(""), "bad_json");
}

TEST(RequestParse, NotAnObjectIsBadRequest) {
  EXPECT_EQ(code_of("[1,2]"), "bad_request");
  EXPECT_EQ(code_of("42"), "bad_request");
  EXPECT_NE(message_of("[1]").find("array"), std::string::npos);
}

TEST(RequestParse, MissingOrWrongCmd) {
  EXPECT_EQ(code_of(R"({"id":1})"), "bad_request");
  EXPECT_NE(message_of(R"({"id":1})").find("'cmd'"), std::string::npos);
  EXPECT_EQ(code_of(R"({"cmd":5})"), "bad_request");
  EXPECT_NE(message_of(R"({"cmd":5})").find("must be a string, got integer"), std::string::npos);
}

TEST(RequestParse, UnknownCommandListsValidOnes) {
  EXPECT_EQ(code_of(R"({"cmd":"format-disk"})"), "unknown_command");
  std::string m = message_of(R"({"cmd":"format-disk"})");
  EXPECT_NE(m.find("status"), std::string::npos);
  EXPECT_NE(m.find("audit.verify"), std::string::npos);
}

TEST(RequestParse, WrongTypesNameTheField) {
  EXPECT_EQ(code_of(R"({"cmd":"status","args":[]})"), "bad_request");
  EXPECT_NE(message_of(R"({"cmd":"status","args":"x"})").find("'args' must be an object"),
            std::string::npos);
  EXPECT_EQ(code_of(R"({"cmd":"turn","idempotency_key":3})"), "bad_request");
  EXPECT_EQ(code_of(R"({"cmd":"turn","id":{"a":1}})"), "bad_request");
  EXPECT_EQ(code_of(R"({"cmd":"turn","extra":1})"), "bad_request");
}

TEST(RequestParse, IdIsKeptForErrorReplies) {
  nlohmann::json id;
  EXPECT_EQ(code_of(R"({"id":9,"cmd":"nope"})", &id), "unknown_command");
  EXPECT_EQ(id, 9);
}

TEST(Replies, Shapes) {
  auto ok = protocol::ok_reply(7, {{"turn", 3}});
  EXPECT_EQ(protocol::to_line(ok), "{\"id\":7,\"ok\":true,\"result\":{\"turn\":3}}\n");
  auto err = protocol::error_reply(nullptr, Errc::kBadJson, "nope");
  EXPECT_EQ(protocol::to_line(err),
            "{\"error\":{\"code\":\"bad_json\",\"message\":\"nope\"},\"id\":null,\"ok\":false}\n");
}

TEST(Replies, InvalidUtf8IsReplacedNotThrown) {
  auto err = protocol::error_reply(nullptr, Errc::kInternal, std::string("bad \xff byte"));
  EXPECT_NO_THROW(protocol::to_line(err));
}

// A result already serialized makes the same line as ok_reply with the result's value.
TEST(Replies, AnOkReplyAroundAResultsTextIsTheSameLine) {
  const std::vector<nlohmann::json> ids = {nullptr, 7, -1, 2.5, "a\"b\n\x1b", ""};
  const std::vector<nlohmann::json> results = {
      nlohmann::json::object(), {{"turn", 3}}, {{"z", {1, 2}}, {"a", "\u202e\xff"}}, nullptr, "x"};
  for (const auto& id : ids) {
    for (const auto& result : results) {
      EXPECT_EQ(protocol::ok_reply_line(id, base::json_text(result)),
                protocol::to_line(protocol::ok_reply(id, result)))
          << id.dump() << " "
          << result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
}

TEST(LineFramer, SplitsLinesAcrossChunks) {
  protocol::LineFramer f;
  f.feed(std::string_view("{\"a\":1}\n{\"b\""));
  auto l1 = f.next();
  ASSERT_TRUE(l1);
  EXPECT_EQ(l1->text, "{\"a\":1}");
  EXPECT_FALSE(f.next());
  f.feed(std::string_view(":2}\r\n"));
  auto l2 = f.next();
  ASSERT_TRUE(l2);
  EXPECT_EQ(l2->text, "{\"b\":2}");
}

TEST(LineFramer, OverlongLineIsReportedOnceAndSkipped) {
  protocol::LineFramer f(16);
  f.feed(std::string(10, 'x'));
  f.feed(std::string(10, 'y'));  // now over the limit: dropped, discarding
  EXPECT_LE(f.buffered(), 16u);
  EXPECT_TRUE(f.discarding());
  f.feed(std::string(1000, 'z'));
  EXPECT_EQ(f.buffered(), 0u);
  f.feed(std::string_view("zz\nok\n"));
  auto l1 = f.next();
  ASSERT_TRUE(l1);
  EXPECT_TRUE(l1->too_long);
  auto l2 = f.next();
  ASSERT_TRUE(l2);
  EXPECT_FALSE(l2->too_long);
  EXPECT_EQ(l2->text, "ok");
  EXPECT_FALSE(f.next());
}

TEST(LineFramer, LineOfExactlyTheLimitIsAccepted) {
  protocol::LineFramer f(8);
  f.feed(std::string(8, 'a') + "\n");
  auto l = f.next();
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->too_long);
  EXPECT_EQ(l->text.size(), 8u);
}

TEST(LineFramer, FinishTakesTheUnterminatedTail) {
  protocol::LineFramer f;
  f.feed("{\"cmd\":\"status\"}\n{\"cmd\":\"turn\"}");
  ASSERT_EQ(f.next()->text, "{\"cmd\":\"status\"}");
  EXPECT_FALSE(f.has_line());
  f.finish();
  ASSERT_TRUE(f.has_line());
  EXPECT_EQ(f.next()->text, "{\"cmd\":\"turn\"}");
  f.finish();  // nothing left: no empty line appears
  EXPECT_FALSE(f.has_line());

  protocol::LineFramer g(8);
  g.feed("0123456789abc");  // over the limit, reported once
  ASSERT_TRUE(g.next()->too_long);
  g.finish();  // its tail is not a line
  EXPECT_FALSE(g.has_line());
}

TEST(LineFramer, NeverBuffersMoreThanTheLimit) {
  protocol::LineFramer f(1024);
  std::string chunk(4096, 'q');
  for (int i = 0; i < 1000; ++i) {
    f.feed(chunk);
    ASSERT_LE(f.buffered(), 1024u);
  }
}

TEST(Durations, Units) {
  EXPECT_EQ(protocol::parse_duration_ms("30s"), 30'000);
  EXPECT_EQ(protocol::parse_duration_ms("10m"), 600'000);
  EXPECT_EQ(protocol::parse_duration_ms("2h"), 7'200'000);
  EXPECT_EQ(protocol::parse_duration_ms("1d"), 86'400'000);
  EXPECT_EQ(protocol::parse_duration_ms("500ms"), 500);
  // A number without a unit is a guess (seconds? minutes?): refused.
  EXPECT_FALSE(protocol::parse_duration_ms("45"));
  EXPECT_FALSE(protocol::parse_duration_ms(""));
  EXPECT_FALSE(protocol::parse_duration_ms("0s"));
  EXPECT_FALSE(protocol::parse_duration_ms("-5m"));
  EXPECT_FALSE(protocol::parse_duration_ms("10x"));
  EXPECT_FALSE(protocol::parse_duration_ms("m"));
  EXPECT_FALSE(protocol::parse_duration_ms("99999999999999999999d"));
}

TEST(CommandTable, EveryProtocolCommandHasAHandler) {
  for (const auto& spec : protocol::command_registry()) {
    const Command* c = find_command(spec.name);
    ASSERT_NE(c, nullptr) << spec.name;
    EXPECT_NE(c->handler, nullptr) << spec.name;
    EXPECT_EQ(c->mutating, spec.mutating) << spec.name;
    EXPECT_EQ(c->streams, spec.streams) << spec.name;
  }
  EXPECT_EQ(command_table().size(), protocol::command_registry().size());
}

TEST(CommandTable, MutatingFlags) {
  for (auto name : {"start", "turn", "end-turn", "grant", "revoke", "request", "approve", "reject",
                    "checkpoint", "resume", "transition", "memory.save"}) {
    EXPECT_TRUE(find_command(name)->mutating) << name;
  }
  for (auto name : {"status", "memory.search", "watch", "audit.verify"}) {
    EXPECT_FALSE(find_command(name)->mutating) << name;
  }
}

}  // namespace
}  // namespace leasefs::control

namespace leasefs::control {
namespace {

std::string bound_code(const std::string& line) {
  try {
    protocol::parse_request(line);
    return "ok";
  } catch (const Error& e) {
    return std::string(e.code());
  }
}

TEST(RequestBounds, DepthCountsAndShapesAreCheckedBeforeTheTreeExists) {
  std::string deep = R"({"cmd":"status","args":{"a":)";
  for (int i = 0; i < 100'000; ++i) deep += "[";
  EXPECT_EQ(bound_code(deep), "bad_request");  // refused at depth 33, not at the end
  std::string ok = R"({"cmd":"status","args":{"a":)";
  for (int i = 0; i < 30; ++i) ok += "[";
  for (int i = 0; i < 30; ++i) ok += "]";
  EXPECT_EQ(bound_code(ok + "}}"), "ok");
  EXPECT_EQ(bound_code(R"({"cmd":"status","cmd":"turn"})"), "bad_request");
  EXPECT_EQ(bound_code(R"({"cmd":"status","args":{"a":1,"a":2}})"), "bad_request");
  EXPECT_EQ(bound_code(R"({"cmd":"status","args":{"a":{"b":1},"c":{"b":1}}})"), "ok");
  EXPECT_EQ(bound_code(R"({"id":1e999,"cmd":"status"})"), "bad_request");
  EXPECT_EQ(bound_code(R"({"id":-1e999,"cmd":"status"})"), "bad_request");
  EXPECT_EQ(bound_code(R"({"id":18446744073709551616,"cmd":"status"})"), "bad_request");
  EXPECT_EQ(bound_code(R"({"id":18446744073709551615,"cmd":"status"})"), "ok");
  EXPECT_EQ(bound_code(R"({"id":1.5,"cmd":"status"})"), "ok");
  EXPECT_EQ(bound_code(R"({"cmd":"status","args":{"a\u0000":1}})"), "bad_request");
  EXPECT_EQ(bound_code("{\"cmd\":\"status\",\"args\":{\"a\":\"\xc3\"}}"), "bad_json");
  EXPECT_EQ(bound_code(R"({"cmd":"status")"), "bad_json");
}

}  // namespace
}  // namespace leasefs::control

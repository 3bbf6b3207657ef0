// Attack class: hostile request bytes. The agent sends, on one connection, lines
// built to crash or confuse the daemon: nesting far past any sane depth (which
// a recursive dump or compare of the request would overflow the stack on), a
// key given twice (which one counts?), numbers no 64-bit integer or double holds,
// NUL in a string, huge lists and strings, a TTL without a unit. Each must get a
// clear refusal, the same connection must go on answering, and nothing may be
// granted.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

std::string code_of(const std::string& line) {
  json reply = json::parse(line, nullptr, false);
  if (reply.is_discarded()) return "<no reply: " + line + ">";
  return reply.value("error", json::object()).value("code", "<ok>");
}

// Nesting `depth` deep, alternating arrays and objects, around `inner`.
std::string nested(size_t depth, const std::string& inner) {
  std::string s;
  for (size_t i = 0; i < depth; ++i) s += (i % 2) ? "{\"k\":" : "[";
  s += inner;
  for (size_t i = depth; i-- > 0;) s += (i % 2) ? "}" : "]";
  return s;
}

struct Case {
  const char* what;
  std::string line;
  const char* code;
};

std::vector<Case> hostile_lines() {
  std::string big_list = "[";
  for (int i = 0; i < 6000; ++i) big_list += (i ? ",1" : "1");
  big_list += "]";
  return {
      {"deep nesting with an idempotency key (fingerprinted)",
       R"({"id":1,"cmd":"request","idempotency_key":"k1","args":{"reason":"x","paths":)" +
           nested(200'000, "0") + "}}",
       "bad_request"},
      {"nesting just past the bound",
       R"({"id":2,"cmd":"request","args":{"reason":"x","paths":)" + nested(40, "0") + "}}",
       "bad_request"},
      {"a key given twice",
       R"({"id":3,"cmd":"request","args":{"reason":"harmless","reason":"other"}})", "bad_request"},
      {"a key given twice at the top", R"({"id":4,"cmd":"status","cmd":"turn"})", "bad_request"},
      {"1e999", R"({"id":1e999,"cmd":"status"})", "bad_request"},
      {"an id that overflows 64 bits", R"({"id":99999999999999999999999,"cmd":"status"})",
       "bad_request"},
      {"NUL in a string", R"({"id":5,"cmd":"request","args":{"reason":"a\u0000b"}})",
       "bad_request"},
      {"invalid UTF-8", "{\"id\":6,\"cmd\":\"request\",\"args\":{\"reason\":\"\xff\xfe\"}}",
       "bad_json"},
      {"6000 values", R"({"id":7,"cmd":"request","args":{"reason":"x","paths":)" + big_list + "}}",
       "bad_request"},
      {"a 100 KiB string",
       R"({"id":8,"cmd":"request","args":{"reason":")" + std::string(100 * 1024, 'r') + "\"}}",
       "bad_request"},
      {"a 20 KiB reason",
       R"({"id":9,"cmd":"request","args":{"reason":")" + std::string(20 * 1024, 'r') + "\"}}",
       "bad_request"},
      {"a 300-byte id", R"({"id":")" + std::string(300, 'i') + R"(","cmd":"status"})",
       "bad_request"},
  };
}

TEST(ControlInputBounds, HostileLinesAreRefusedAndTheConnectionSurvives) {
  ControlDaemon d;
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  const pid_t daemon = d.pid();
  {
    ControlClient root(d.socket());
    ASSERT_TRUE(root.call("start", {{"description", "bounds"}}).value("ok", false));
  }

  // The agent: every hostile line on one connection, then an honest request.
  pid_t agent = spawn_agent([&] {
    ControlClient c(d.socket());
    int failures = 0;
    for (const auto& k : hostile_lines()) {
      c.send_line(k.line);
      std::string reply = c.read_line(20'000);
      if (code_of(reply) != k.code) {
        std::fprintf(stderr, "%s: expected %s, got %s\n", k.what, k.code,
                     reply.substr(0, 300).c_str());
        ++failures;
      } else if (json::parse(reply)["error"].value("message", "").empty()) {
        std::fprintf(stderr, "%s: no message\n", k.what);
        ++failures;
      }
    }
    json after = c.call("status");
    if (!after.value("ok", false)) {
      std::fprintf(stderr, "status after the attack: %s\n", after.dump().c_str());
      ++failures;
    }
    return failures;
  });
  EXPECT_EQ(wait_child(agent, 60'000), 0) << "see the lines above";
  EXPECT_EQ(d.pid(), daemon);
  EXPECT_EQ(::kill(daemon, 0), 0) << "the daemon died";

  // No request was recorded from any of it.
  ControlClient root(d.socket());
  json status = root.call("status");
  ASSERT_TRUE(status.value("ok", false)) << status.dump();
  EXPECT_TRUE(status["result"].value("pending_requests", json::array()).empty()) << status.dump();
}

TEST(ControlInputBounds, TtlsOutOfRangeOrWithoutUnitGrantNothing) {
  ControlDaemon d;
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("start", {{"description", "ttl"}}).value("ok", false));
  for (const std::string ttl :
       {R"(-5)", R"(0)", R"("10")", R"("0s")", R"("-1m")", R"(1e999)", R"(99999999999999999999999)",
        R"(1.5)", R"("99999999999999999999d")"}) {
    std::string reply = call_line(
        d.socket(), R"({"id":1,"cmd":"grant","args":{"reason":"r","ttl":)" + ttl + "}}", 10'000);
    json j = json::parse(reply, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << ttl << ": " << reply;
    EXPECT_FALSE(j.value("ok", true)) << ttl << ": " << reply;
  }
  json status = root.call("status");
  EXPECT_TRUE(status["result"].value("grants", json::array()).empty()) << status.dump();

  // leasectl: a TTL without a unit is a usage error (exit 2), sent nowhere.
  RunResult r =
      run_argv({LEASECTL_BIN, "--socket", d.socket(), "grant", "--reason", "r", "--ttl", "90"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--ttl"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace leasefs::test

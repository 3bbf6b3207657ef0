// The command table and dispatcher over a real Service, called directly with
// made-up actors: roles, argument checking, idempotency, error conversion.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <map>

#include "control/commands.hpp"
#include "memory/memory_error.hpp"
#include "tests/control/service_site.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::control {
namespace {

using nlohmann::json;

class MapMemo : public ReplyMemo {
 public:
  std::optional<Entry> lookup(const std::string& key) override {
    auto it = map.find(key);
    if (it == map.end()) return std::nullopt;
    return it->second;
  }
  void remember(const std::string& key, const std::string& command, const std::string& hash,
                const json& reply) override {
    map.emplace(key, Entry{command, hash, reply});
  }
  std::map<std::string, Entry> map;
};

// A memory whose every call fails, as a broken disk would.
class BrokenMemory : public memory::MemoryStore {
 public:
  std::vector<memory::SearchHit> search(std::string_view, size_t) override {
    throw memory::MemoryError("disk on fire");
  }
  memory::Record save(const memory::NewRecord&) override {
    throw memory::MemoryError("disk on fire");
  }
  std::optional<memory::Record> find_by_ref(std::string_view) override { return std::nullopt; }
  std::optional<memory::Record> newest(std::string_view, std::string_view) override {
    return std::nullopt;
  }
  size_t count() override { return 0; }
};

class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CommandContext ctx;
    ctx.service = service_;
    ctx.audit_verify = [](const std::optional<std::string>&) {
      return json{{"ok", true}, {"records", 0}};
    };
    dispatcher_ = std::make_unique<Dispatcher>(ctx, &memo_);
  }

  json run(const std::string& line, const gate::Actor& actor) {
    return dispatcher_->handle_line(line, actor).reply();
  }
  json run(const std::string& cmd, json args, const gate::Actor& actor) {
    return run(json{{"id", 1}, {"cmd", cmd}, {"args", args}}.dump(), actor);
  }
  static std::string code(const json& reply) {
    return reply.value("error", json::object()).value("code", "");
  }

  gate::Actor agent_{100, 1000, 1000, false};
  gate::Actor person_{200, 0, 0, true};

  ServiceSite site_;  // first: the dispatcher below is let go before it
  service::Service* const service_ = &site_.service;
  report::EventBus& bus_ = site_.bus;
  MapMemo memo_;
  std::unique_ptr<Dispatcher> dispatcher_;
};

TEST_F(DispatcherTest, AgentMayNotGrantApproveRejectOrComplete) {
  ASSERT_TRUE(run("start", {{"description", "x"}}, agent_).value("ok", false));
  EXPECT_EQ(code(run("grant", {{"reason", "me"}}, agent_)), "forbidden");
  auto req = run("request", {{"reason", "edit a"}}, agent_);
  ASSERT_TRUE(req.value("ok", false)) << req.dump();
  std::string rid = req["result"]["request"]["id"];
  EXPECT_EQ(code(run("approve", {{"id", rid}}, agent_)), "forbidden");
  EXPECT_EQ(code(run("reject", {{"id", rid}}, agent_)), "forbidden");
  EXPECT_EQ(code(run("transition", {{"state", "completed"}}, agent_)), "forbidden");
  // The agent side may ask, read, advance turns and checkpoint.
  EXPECT_TRUE(run("status", json::object(), agent_).value("ok", false));
  EXPECT_TRUE(run("turn", json::object(), agent_).value("ok", false));
  EXPECT_TRUE(run("grant", {{"reason", "ok by me"}}, person_).value("ok", false));
}

TEST_F(DispatcherTest, WrongArgumentTypesNameTheArgument) {
  auto r = run("grant", {{"reason", 5}}, person_);
  EXPECT_EQ(code(r), "bad_request");
  EXPECT_NE(r["error"]["message"].get<std::string>().find("'reason'"), std::string::npos);
  r = run("grant", {{"reason", "x"}, {"paths", "src/*"}}, person_);
  EXPECT_EQ(code(r), "bad_request");
  EXPECT_NE(r["error"]["message"].get<std::string>().find("'paths' must be a array of strings"),
            std::string::npos);
  EXPECT_EQ(code(run("grant", {{"reason", "x"}, {"paths", {1}}}, person_)), "bad_request");
  EXPECT_EQ(
      code(run("checkpoint", {{"summary", "s"}, {"next", "n"}, {"retry_pending", "yes"}}, agent_)),
      "bad_request");
  EXPECT_EQ(code(run("memory.search", {{"query", "q"}, {"limit", -1}}, agent_)), "bad_request");
  EXPECT_EQ(code(run("grant", {{"reason", "x"}, {"ttl", true}}, person_)), "bad_request");
}

TEST_F(DispatcherTest, MissingArgumentsAreBadRequest) {
  auto r = run("start", json::object(), agent_);
  EXPECT_EQ(code(r), "bad_request");
  EXPECT_NE(r["error"]["message"].get<std::string>().find("'description'"), std::string::npos);
  EXPECT_EQ(code(run("approve", json::object(), person_)), "bad_request");
  EXPECT_EQ(code(run("transition", json::object(), person_)), "bad_request");
  EXPECT_EQ(code(run("memory.save", {{"title", "t"}}, agent_)), "bad_request");
  EXPECT_EQ(code(run("checkpoint", {{"summary", "s"}}, agent_)), "bad_request");
}

TEST_F(DispatcherTest, UnknownArgumentsAreRefused) {
  auto r = run("grant", {{"reason", "x"}, {"path", {"src/*"}}}, person_);
  EXPECT_EQ(code(r), "bad_request");
  EXPECT_NE(r["error"]["message"].get<std::string>().find("'path'"), std::string::npos);
}

TEST_F(DispatcherTest, BadValuesAreInvalidArgument) {
  ASSERT_TRUE(run("start", {{"description", "x"}}, agent_).value("ok", false));
  EXPECT_EQ(code(run("grant", {{"reason", "x"}, {"ops", "write,explode"}}, person_)),
            "invalid_argument");
  EXPECT_EQ(code(run("grant", {{"reason", "x"}, {"ttl", "soon"}}, person_)), "invalid_argument");
  EXPECT_EQ(code(run("transition", {{"state", "done"}}, person_)), "invalid_argument");
  EXPECT_EQ(
      code(run("checkpoint", {{"summary", "s"}, {"next", "n"}, {"status", "asleep"}}, agent_)),
      "invalid_argument");
}

TEST_F(DispatcherTest, GrantAcceptsOpsAsStringOrArrayAndTtlFormats) {
  ASSERT_TRUE(run("start", {{"description", "x"}}, agent_).value("ok", false));
  auto a = run("grant", {{"reason", "a"}, {"ops", "write,create"}, {"ttl", "10m"}}, person_);
  ASSERT_TRUE(a.value("ok", false)) << a.dump();
  EXPECT_EQ(a["result"]["grant"]["ops"], json({"write", "create"}));
  auto b = run("grant", {{"reason", "b"}, {"ops", {"rename"}}, {"ttl", 30}}, person_);
  ASSERT_TRUE(b.value("ok", false)) << b.dump();
  EXPECT_EQ(b["result"]["grant"]["ops"], json({"rename"}));
  int64_t issued_window = b["result"]["grant"]["expires_ms"].get<int64_t>() - base::now_ms();
  EXPECT_GT(issued_window, 25'000);
  EXPECT_LE(issued_window, 30'000);
}

TEST_F(DispatcherTest, IdempotentReplayDoesNotRunTwice) {
  ASSERT_TRUE(run("start", {{"description", "x"}}, agent_).value("ok", false));
  std::string line1 = R"({"id":1,"cmd":"turn","idempotency_key":"t-1"})";
  std::string line2 = R"({"id":2,"cmd":"turn","idempotency_key":"t-1"})";
  auto first = run(line1, agent_);
  auto second = run(line2, agent_);
  ASSERT_TRUE(first.value("ok", false));
  EXPECT_EQ(second["id"], 2);
  EXPECT_EQ(second["result"], first["result"]);
  EXPECT_EQ(service_->state().turn_index, first["result"]["turn"].get<uint64_t>());
  // Another command under the same key is the caller's error.
  auto other = run(R"({"id":3,"cmd":"end-turn","idempotency_key":"t-1"})", agent_);
  EXPECT_EQ(code(other), "idempotency_conflict");
  EXPECT_EQ(other["id"], 3);
}

TEST_F(DispatcherTest, IdempotencyKeyIsScopedToTheCaller) {
  ASSERT_TRUE(run("start", {{"description", "x"}}, agent_).value("ok", false));
  auto req = run("request", {{"reason", "edit a"}}, agent_);
  ASSERT_TRUE(req.value("ok", false)) << req.dump();
  std::string rid = req["result"]["request"]["id"];
  std::string approve =
      json{{"id", 1}, {"cmd", "approve"}, {"args", {{"id", rid}}}, {"idempotency_key", "k1"}}
          .dump();
  // The agent's refusal is remembered under the agent's key...
  EXPECT_EQ(code(run(approve, agent_)), "forbidden");
  // ...and is not what the approver gets for the same key.
  auto mine = run(approve, person_);
  ASSERT_TRUE(mine.value("ok", false)) << mine.dump();
  EXPECT_FALSE(mine.contains("replayed"));
  EXPECT_EQ(service_->state().grants.size(), 1u);
}

TEST_F(DispatcherTest, AnotherCallersKeyDoesNotReplayTheirGrant) {
  ASSERT_TRUE(run("start", {{"description", "x"}}, agent_).value("ok", false));
  std::string grant = json{
      {"id", 1},
      {"cmd", "grant"},
      {"args", {{"reason", "docs only"}, {"paths", {"docs/**"}}}},
      {"idempotency_key",
       "k2"}}.dump();
  auto granted = run(grant, person_);
  ASSERT_TRUE(granted.value("ok", false)) << granted.dump();
  // The agent sends the very same line: it runs as the agent's own request.
  auto stolen = run(grant, agent_);
  EXPECT_EQ(code(stolen), "forbidden") << stolen.dump();
  EXPECT_FALSE(stolen.contains("result"));
}

TEST_F(DispatcherTest, IdempotencyKeyIsBoundToTheArguments) {
  ASSERT_TRUE(run("start", {{"description", "x"}}, agent_).value("ok", false));
  auto first = run(
      R"({"id":1,"cmd":"grant","args":{"reason":"docs","paths":["docs/**"]},"idempotency_key":"k3"})",
      person_);
  ASSERT_TRUE(first.value("ok", false)) << first.dump();
  // Same key, same request (arguments in another order): the first reply again.
  auto again = run(
      R"({"id":2,"cmd":"grant","args":{"paths":["docs/**"],"reason":"docs"},"idempotency_key":"k3"})",
      person_);
  ASSERT_TRUE(again.value("ok", false)) << again.dump();
  EXPECT_TRUE(again.value("replayed", false));
  EXPECT_EQ(again["result"], first["result"]);
  // Same key, wider paths: refused, never answered with the narrower grant.
  auto wider = run(
      R"({"id":3,"cmd":"grant","args":{"reason":"docs","paths":["**"]},"idempotency_key":"k3"})",
      person_);
  EXPECT_EQ(code(wider), "idempotency_conflict") << wider.dump();
  EXPECT_EQ(wider["id"], 3);
  EXPECT_EQ(service_->state().grants.size(), 1u);
}

TEST(RequestFingerprint, CommandAndArgumentsButNotTheirOrder) {
  auto a = request_fingerprint("grant", json::parse(R"({"reason":"r","paths":["a"]})"));
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a, request_fingerprint("grant", json::parse(R"({"paths":["a"],"reason":"r"})")));
  EXPECT_NE(a, request_fingerprint("grant", json::parse(R"({"reason":"r","paths":["b"]})")));
  EXPECT_NE(a, request_fingerprint("request", json::parse(R"({"reason":"r","paths":["a"]})")));
  EXPECT_EQ(scoped_idempotency_key(gate::Actor{1, 1000, 1000, false}, "k"), "1000:k");
}

TEST_F(DispatcherTest, RefusalsAreRememberedToo) {
  auto first =
      run(R"({"id":1,"cmd":"grant","args":{"reason":"r"},"idempotency_key":"g"})", person_);
  EXPECT_EQ(code(first), "no_task") << first.dump();
  ASSERT_TRUE(run("start", {{"description", "x"}}, agent_).value("ok", false));
  auto again =
      run(R"({"id":2,"cmd":"grant","args":{"reason":"r"},"idempotency_key":"g"})", person_);
  EXPECT_EQ(code(again), "no_task");
}

TEST_F(DispatcherTest, ReadOnlyCommandsIgnoreTheKey) {
  run(R"({"id":1,"cmd":"status","idempotency_key":"s"})", agent_);
  EXPECT_TRUE(memo_.map.empty());
}

TEST_F(DispatcherTest, MemoryFailuresBecomeMemoryError) {
  BrokenMemory broken;
  gate::Gate gate;
  report::EventBus bus;
  test::TempDir other;
  base::UniqueFd fd(::open(other.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  state::LongrunDir dir(fd.get(), other.path());
  state::StateStore store(dir);
  service::Service service(store, broken, nullptr, gate, bus);
  CommandContext ctx;
  ctx.service = &service;
  Dispatcher d(ctx, &memo_);
  auto r = d.handle_line(R"({"id":4,"cmd":"memory.search","args":{"query":"x"}})", agent_).reply();
  EXPECT_EQ(code(r), "memory_error");
  EXPECT_EQ(r["id"], 4);
  // Transient failures are not remembered: a retry may succeed.
  d.handle_line(R"({"id":5,"cmd":"start","args":{"description":"x"},"idempotency_key":"m"})",
                agent_);
  EXPECT_FALSE(memo_.map.contains(scoped_idempotency_key(agent_, "m")));
}

TEST_F(DispatcherTest, AuditBreakIsAnError) {
  CommandContext ctx;
  ctx.service = service_;
  ctx.audit_verify = [](const std::optional<std::string>&) {
    return json{{"ok", false}, {"message", "line 3 was edited"}, {"kind", "edited"}};
  };
  Dispatcher d(ctx, nullptr);
  auto r = d.handle_line(R"({"id":1,"cmd":"audit.verify"})", agent_).reply();
  EXPECT_EQ(code(r), "audit_broken");
  EXPECT_EQ(r["error"]["message"], "line 3 was edited");
}

TEST_F(DispatcherTest, WatchAsksToStream) {
  auto out = dispatcher_->handle_line(R"({"id":1,"cmd":"watch"})", agent_);
  EXPECT_TRUE(out.stream);
  EXPECT_TRUE(out.reply().value("ok", false));
  EXPECT_FALSE(dispatcher_->handle_line(R"({"id":1,"cmd":"status"})", agent_).stream);
}

// Replies are rendered in control/ (control/render.cpp), events in the service:
// a grant or request must read the same in a reply and on the watch stream.
TEST_F(DispatcherTest, RepliesShowGrantsAndRequestsAsTheWatchStreamDoes) {
  auto events = bus_.subscribe();
  auto next_event = [&](const std::string& type) {
    while (auto e = events->pop(std::chrono::milliseconds(1000))) {
      json value = e->value();
      if (value["type"] == type) return value;
    }
    return json();
  };
  ASSERT_TRUE(run("start", {{"description", "x"}}, agent_).value("ok", false));
  auto req = run("request", {{"reason", "edit a"}, {"paths", {"src/a.c"}}}, agent_);
  ASSERT_TRUE(req.value("ok", false)) << req.dump();
  EXPECT_EQ(req["result"]["request"], next_event("request")["request"]);
  auto grant = run("grant", {{"reason", "go"}, {"paths", {"src/**"}}, {"ttl", "10m"}}, person_);
  ASSERT_TRUE(grant.value("ok", false)) << grant.dump();
  EXPECT_EQ(grant["result"]["grant"], next_event("grant")["grant"]);
  EXPECT_FALSE(grant["result"]["grant"]["expires_ms"].is_null());
  auto approved = run("approve", {{"id", req["result"]["request"]["id"]}}, person_);
  ASSERT_TRUE(approved.value("ok", false)) << approved.dump();
  EXPECT_EQ(approved["result"]["grant"]["id"], next_event("decision")["grant_id"]);
  EXPECT_EQ(approved["result"]["grant"]["request_id"], req["result"]["request"]["id"]);
  EXPECT_EQ(approved["result"]["request"]["state"], "approved");
}

}  // namespace
}  // namespace leasefs::control

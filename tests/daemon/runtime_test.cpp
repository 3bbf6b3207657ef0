// The control plane end to end: a real Runtime, a real socket, real clients.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "gate/gate.hpp"
#include "protocol/request.hpp"
#include "tests/support/runtime_harness.hpp"

namespace leasefs::control::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class ControlTest : public ::testing::Test {
 protected:
  RuntimeHarness h;
};

// --- per command ------------------------------------------------------------

TEST_F(ControlTest, Status) {
  auto r = h.ok("status");
  EXPECT_TRUE(r["task"].is_null());
  EXPECT_EQ(r["access_mode"], "read_only");
  EXPECT_EQ(h.error_code("status", {{"verbose", true}}), "bad_request");
}

TEST_F(ControlTest, StartSearchesMemoryFirstAndRefusesASecondTask) {
  h.ok("memory.save", {{"title", "fetcher timeout"}, {"content", "the fetcher timeout is 30s"}});
  auto r = h.ok("start", {{"description", "raise the fetcher timeout"},
                          {"keywords", {"fetcher"}},
                          {"done_when", "tests pass"}});
  EXPECT_EQ(r["task"]["status"], "in_progress");
  EXPECT_FALSE(r["memories"].empty());
  EXPECT_EQ(h.error_code("start", {{"description", "another"}}), "task_exists");
}

TEST_F(ControlTest, TurnAndEndTurnRevokeTheLease) {
  h.start_task();
  h.ok("grant", {{"reason", "edit A"}});
  auto t = h.ok("turn");
  EXPECT_EQ(t["revoked"], 1);
  h.ok("grant", {{"reason", "edit B"}});
  auto e = h.ok("end-turn");
  EXPECT_EQ(e["revoked"], 1);
  EXPECT_EQ(h.error_code("turn", {{"n", 1}}), "bad_request");
}

TEST_F(ControlTest, GrantOpensTheGateForThisTurnOnly) {
  EXPECT_EQ(h.error_code("grant", {{"reason", "no task yet"}}), "no_task");
  h.start_task();
  EXPECT_FALSE(h.runtime().gate().check(gate::Op::kWrite, "src/a.c", {}).allowed);
  auto g = h.ok("grant", {{"reason", "change the timeout in A"},
                          {"paths", {"src/*"}},
                          {"ops", "write"},
                          {"ttl", "10m"}});
  EXPECT_EQ(g["grant"]["reason"], "change the timeout in A");
  EXPECT_TRUE(h.runtime().gate().check(gate::Op::kWrite, "src/a.c", {}).allowed);
  EXPECT_FALSE(h.runtime().gate().check(gate::Op::kUnlink, "src/a.c", {}).allowed);
  h.ok("turn");
  EXPECT_FALSE(h.runtime().gate().check(gate::Op::kWrite, "src/a.c", {}).allowed);
}

TEST_F(ControlTest, RevokeOneOrAll) {
  h.start_task();
  std::string g1 = h.ok("grant", {{"reason", "a"}})["grant"]["id"];
  h.ok("grant", {{"reason", "b"}});
  EXPECT_EQ(h.ok("revoke", {{"grant_id", g1}})["revoked"], 1);
  EXPECT_EQ(h.ok("revoke")["revoked"], 1);
  EXPECT_EQ(h.error_code("revoke", {{"grant_id", 7}}), "bad_request");
}

TEST_F(ControlTest, RequestApproveReject) {
  EXPECT_EQ(h.error_code("request", {{"reason", "edit"}}), "no_task");
  h.start_task();
  std::string r1 = h.ok("request", {{"reason", "edit A"}, {"paths", {"a.c"}}})["request"]["id"];
  std::string r2 = h.ok("request", {{"reason", "edit B"}})["request"]["id"];
  auto a = h.ok("approve", {{"id", r1}, {"reason", "yes, only A"}});
  EXPECT_EQ(a["grant"]["request_id"], r1);
  EXPECT_TRUE(h.runtime().gate().check(gate::Op::kWrite, "a.c", {}).allowed);
  auto j = h.ok("reject", {{"id", r2}, {"reason", "not B"}});
  EXPECT_EQ(j["request"]["state"], "rejected");
  EXPECT_EQ(h.error_code("approve", {{"id", "R_9999"}}), "not_found");
  EXPECT_EQ(h.error_code("reject", {{"id", r1}}), "already_decided");
}

TEST_F(ControlTest, CheckpointPrintsWhatWasSaved) {
  EXPECT_EQ(h.error_code("checkpoint", {{"summary", "s"}, {"next", "n"}}), "no_task");
  h.start_task();
  h.ok("grant", {{"reason", "a"}});
  auto c = h.ok("checkpoint", {{"summary", "raised the timeout"},
                               {"next", "run the tests"},
                               {"status", "paused"},
                               {"verified", "unit tests"}});
  EXPECT_NE(c["text"].get<std::string>().find("raised the timeout"), std::string::npos);
  EXPECT_EQ(c["status"], "paused");
  EXPECT_FALSE(h.runtime().gate().check(gate::Op::kWrite, "a.c", {}).allowed);
  EXPECT_EQ(h.error_code("checkpoint", {{"summary", "s"}, {"next", "n"}, {"status", "nap"}}),
            "invalid_argument");
}

TEST_F(ControlTest, ResumeAfterCheckpoint) {
  EXPECT_EQ(h.error_code("resume"), "no_task");
  h.start_task();
  h.ok("checkpoint", {{"summary", "half done"}, {"next", "other half"}});
  auto r = h.ok("resume");
  EXPECT_EQ(r["task"]["status"], "in_progress");
  EXPECT_FALSE(r["checkpoint"].is_null());
  EXPECT_EQ(h.error_code("resume", {{"task_id", 5}}), "bad_request");
}

TEST_F(ControlTest, Transition) {
  h.start_task();
  auto t = h.ok("transition", {{"state", "blocked"}, {"reason", "waiting on CI"}});
  EXPECT_EQ(t["to"], "blocked");
  EXPECT_EQ(h.error_code("transition", {{"state", "waiting_verification"}}), "invalid_transition");
  EXPECT_EQ(h.error_code("transition", {{"state", "sideways"}}), "invalid_argument");
}

TEST_F(ControlTest, MemorySaveAndSearch) {
  auto s = h.ok("memory.save", {{"title", "flaky test"},
                                {"content", "test_fetch is flaky under load"},
                                {"keywords", {"flaky"}}});
  EXPECT_FALSE(s["id"].get<std::string>().empty());
  auto hits = h.ok("memory.search", {{"query", "flaky"}, {"limit", 5}})["hits"];
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0]["title"], "flaky test");
  EXPECT_EQ(h.error_code("memory.search", {{"query", "x"}, {"limit", 0}}), "invalid_argument");
  EXPECT_EQ(h.error_code("memory.save", {{"title", ""}, {"content", ""}}), "invalid_argument");
}

TEST_F(ControlTest, AuditVerifySeesEveryEvent) {
  h.start_task();
  h.ok("grant", {{"reason", "a"}});
  h.ok("turn");
  // The audit writer is asynchronous; give it a moment.
  json r;
  for (int i = 0; i < 50; ++i) {
    r = h.ok("audit.verify");
    if (r.value("records", 0) >= 3) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(r["ok"]);
  EXPECT_GE(r["records"].get<int>(), 3);
  EXPECT_EQ(h.error_code("audit.verify", {{"deep", true}}), "bad_request");
}

TEST_F(ControlTest, WatchStreamsEventsUntilTheClientLeaves) {
  protocol::Client w = h.client();
  auto ack = w.call("watch");
  ASSERT_TRUE(ack["ok"]) << ack.dump();
  h.start_task();
  h.ok("grant", {{"reason", "watch me"}});
  std::vector<std::string> types;
  while (types.size() < 2) {
    auto line = w.read_line(5s);
    ASSERT_TRUE(line);
    types.push_back(parse_line(*line)["type"]);
  }
  EXPECT_EQ(types[0], "start");
  EXPECT_EQ(types[1], "grant");
  w.close();
  h.ok("turn");  // the server notices the hang-up and keeps serving
  EXPECT_EQ(h.ok("status")["turn"], 1);
}

TEST_F(ControlTest, RefusalsAndClosedWritesBecomeEvents) {
  protocol::Client w = h.client();
  ASSERT_TRUE(w.call("watch")["ok"]);
  h.runtime().reporter().refusal(gate::Op::kUnlink, "src/x.c", gate::Caller{::getpid(), 1000, 1000},
                                 gate::DenyReason::kNoLease);
  std::string file = h.root() + "/hello.txt";
  { std::ofstream(file) << "hello\n"; }
  report::WriteClosed closed;
  closed.path = "hello.txt";
  closed.bytes_written = 6;
  closed.grant_id = "G_0001";
  closed.content = base::UniqueFd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  h.runtime().reporter().write_closed(std::move(closed));

  json refusal, written;
  for (int i = 0; i < 10 && (refusal.is_null() || written.is_null()); ++i) {
    auto line = w.read_line(5s);
    ASSERT_TRUE(line);
    json e = parse_line(*line);
    if (e["type"] == "refusal") refusal = e;
    if (e["type"] == "write_closed") written = e;
  }
  EXPECT_EQ(refusal["op"], "unlink");
  EXPECT_EQ(refusal["path"], "src/x.c");
  EXPECT_EQ(refusal["uid"], 1000);
  EXPECT_EQ(refusal["reason"], "no_lease");
  EXPECT_EQ(refusal["count"], 1);
  EXPECT_TRUE(refusal.contains("process"));
  EXPECT_EQ(written["sha256"], "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
  EXPECT_EQ(written["bytes"], 6);
  EXPECT_EQ(written["grant_id"], "G_0001");
  // The service keeps it for status. It is noted there after it is published to
  // watchers (report/pump.cpp), so a watcher may see it first: wait (bounded).
  json recent = h.ok("status")["recent_refusals"];
  for (int i = 0; i < 100 && recent.empty(); ++i) {
    std::this_thread::sleep_for(50ms);
    recent = h.ok("status")["recent_refusals"];
  }
  EXPECT_EQ(recent.size(), 1u);
}

TEST(ControlHashLimit, LargeFilesAreNotHashed) {
  daemon::RuntimeOptions o;
  o.hash_limit_bytes = 4;
  RuntimeHarness h(o);
  protocol::Client w = h.client();
  ASSERT_TRUE(w.call("watch")["ok"]);
  std::string file = h.root() + "/big.txt";
  { std::ofstream(file) << "more than four bytes"; }
  report::WriteClosed closed;
  closed.path = "big.txt";
  closed.content = base::UniqueFd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  h.runtime().reporter().write_closed(std::move(closed));
  auto e = parse_line(w.read_line(5s).value());
  EXPECT_EQ(e["type"], "write_closed");
  EXPECT_EQ(e["sha256_skipped"], "size");
  EXPECT_FALSE(e.contains("sha256"));
}

// Clients find the socket in the registry of daemons, never through the tree.
TEST_F(ControlTest, SocketIsChmoddedAndNotRecordedInTheTree) {
  struct stat st {};
  EXPECT_NE(::stat((h.root() + "/.longrun/socket").c_str(), &st), 0);
  ASSERT_EQ(::stat(h.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  struct stat dst {};
  ASSERT_EQ(::stat((h.tmp() + "/run").c_str(), &dst), 0);
  EXPECT_EQ(dst.st_mode & 0777, 0755u);
}

TEST(ControlRuntime, SocketGroupLetsAnAgentGroupConnect) {
  daemon::RuntimeOptions o;
  o.socket_gid = 65534;
  RuntimeHarness h(o);
  struct stat st {};
  ASSERT_EQ(::stat(h.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
}

// --- invariant I8 -------------------------------------------------------------

TEST_F(ControlTest, I8_ConcurrentApprovalsExactlyOneWins) {
  h.start_task();
  std::string rid = h.ok("request", {{"reason", "edit A"}})["request"]["id"];
  constexpr int kThreads = 8;
  std::atomic<int> ok{0}, already{0}, other{0};
  std::vector<std::thread> threads;
  std::atomic<bool> go{false};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      protocol::Client c = h.client();
      while (!go) std::this_thread::yield();
      auto r = c.call("approve", {{"id", rid}, {"reason", "approver " + std::to_string(i)}});
      if (r.value("ok", false)) {
        ++ok;
      } else if (r["error"]["code"] == "already_decided") {
        ++already;
      } else {
        ++other;
      }
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(already, kThreads - 1);
  EXPECT_EQ(other, 0);
  EXPECT_EQ(h.ok("status")["grants"].size(), 1u);
}

TEST_F(ControlTest, I8_StaleApprovalRefused) {
  h.start_task();
  std::string rid = h.ok("request", {{"reason", "edit A"}})["request"]["id"];
  h.ok("turn");
  EXPECT_EQ(h.error_code("approve", {{"id", rid}}), "stale_request");
  EXPECT_FALSE(h.runtime().gate().check(gate::Op::kWrite, "a.c", {}).allowed);
}

TEST_F(ControlTest, I8_UnknownDecisionIsAnError) {
  h.start_task();
  h.ok("request", {{"reason", "edit A"}});
  // No such request: an error, never an implicit approval.
  EXPECT_EQ(h.error_code("approve", {{"id", "R_4242"}}), "not_found");
  // No such decision verb: an error too.
  auto r = h.call("approve-all");
  EXPECT_EQ(r["error"]["code"], "unknown_command");
  EXPECT_EQ(h.error_code("approve", {{"id", ""}}), "not_found");
  EXPECT_TRUE(h.ok("status")["grants"].empty());
  EXPECT_FALSE(h.runtime().gate().check(gate::Op::kWrite, "a.c", {}).allowed);
}

// --- idempotency across a restart -----------------------------------------------

TEST_F(ControlTest, IdempotencySurvivesRestart) {
  h.start_task();
  auto first = h.call("grant", {{"reason", "once"}}, "grant-key-1");
  ASSERT_TRUE(first["ok"]) << first.dump();
  h.restart();  // the restart revokes the lease (I3)
  auto again = h.call("grant", {{"reason", "once"}}, "grant-key-1");
  ASSERT_TRUE(again["ok"]) << again.dump();
  EXPECT_EQ(again["result"], first["result"]);
  // It did not run again: no lease after the restart, and the next grant id follows the first.
  EXPECT_TRUE(h.ok("status")["grants"].empty());
  auto next = h.ok("grant", {{"reason", "fresh"}});
  EXPECT_EQ(next["grant"]["id"], "G_0002");
}

// --- bad input and hostile clients ------------------------------------------------

TEST_F(ControlTest, NotJsonGetsAnErrorAndTheConnectionSurvives) {
  protocol::Client c = h.client();
  c.send_raw("this is not json\n");
  auto r = parse_line(c.read_line(5s).value());
  EXPECT_EQ(r["error"]["code"], "bad_json");
  EXPECT_TRUE(r["id"].is_null());
  c.send_raw("[1,2,3]\n{\"id\":2,\"cmd\":\"nope\"}\n{\"id\":3,\"cmd\":\"status\",\"args\":7}\n");
  EXPECT_EQ(parse_line(c.read_line(5s).value())["error"]["code"], "bad_request");
  auto unknown = parse_line(c.read_line(5s).value());
  EXPECT_EQ(unknown["error"]["code"], "unknown_command");
  EXPECT_EQ(unknown["id"], 2);
  EXPECT_EQ(parse_line(c.read_line(5s).value())["error"]["code"], "bad_request");
  EXPECT_TRUE(c.call("status")["ok"]);
}

TEST_F(ControlTest, TwoMebibyteLineIsRefusedAndEverybodySurvives) {
  protocol::Client c = h.client();
  std::string big = "{\"id\":1,\"cmd\":\"memory.save\",\"args\":{\"title\":\"" +
                    std::string(2 << 20, 'x') + "\"}}\n";
  c.send_raw(big);
  auto r = parse_line(c.read_line(10s).value());
  EXPECT_EQ(r["error"]["code"], "line_too_long");
  EXPECT_TRUE(r["id"].is_null());
  EXPECT_TRUE(c.call("status")["ok"]);  // same connection still works
  EXPECT_TRUE(h.call("status")["ok"]);  // and a new one
}

TEST_F(ControlTest, SilentClientDoesNotBlockOthers) {
  std::vector<protocol::Client> silent;
  for (int i = 0; i < 32; ++i) silent.push_back(h.client());
  protocol::Client half = h.client();
  half.send_raw("{\"id\":1,\"cmd\":\"sta");  // half a line, then nothing
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(h.call("status")["ok"]);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(ControlIdle, IdleConnectionsAreClosed) {
  daemon::RuntimeOptions o;
  o.idle_timeout = 300ms;
  RuntimeHarness h(o);
  protocol::Client c = h.client();
  EXPECT_THROW(
      {
        for (int i = 0; i < 20; ++i) c.read_line(500ms);
      },
      protocol::NoDaemon);
  EXPECT_TRUE(h.call("status")["ok"]);
}

TEST_F(ControlTest, DisconnectMidRequestIsDropped) {
  for (int i = 0; i < 20; ++i) {
    protocol::Client c = h.client();
    c.send_raw("{\"id\":1,\"cmd\":\"turn\"");  // no newline: never a request
    c.close();
  }
  for (int i = 0; i < 20; ++i) {
    protocol::Client c = h.client();
    // A whole request but no newline, then a hang-up (not a half-close): nobody
    // is left to read a reply, so it does not run.
    c.send_raw("{\"id\":1,\"cmd\":\"turn\"}");
    c.close();
  }
  for (int i = 0; i < 20; ++i) {
    protocol::Client c = h.client();
    c.send_raw("{\"id\":1,\"cmd\":\"status\"}\n");
    c.close();  // gone before the reply
  }
  EXPECT_EQ(h.ok("status")["turn"], 0);
}

TEST_F(ControlTest, HalfClosedClientStillGetsItsReply) {
  protocol::Client c = h.client();
  c.send_raw("{\"id\":5,\"cmd\":\"status\"}\n");
  ::shutdown(c.fd(), SHUT_WR);
  auto r = parse_line(c.read_line(5s).value());
  EXPECT_EQ(r["id"], 5);
  EXPECT_TRUE(r["ok"]);
}

// printf '{"cmd":"status"}' | nc -N -U sock: no newline, then EOF.
TEST_F(ControlTest, LastRequestWithoutNewlineIsAnsweredAfterHalfClose) {
  protocol::Client c = h.client();
  c.send_raw("{\"id\":8,\"cmd\":\"status\"}\n{\"id\":9,\"cmd\":\"turn\"}");
  ::shutdown(c.fd(), SHUT_WR);
  auto first = parse_line(c.read_line(5s).value());
  EXPECT_EQ(first["id"], 8);
  EXPECT_TRUE(first["ok"]);
  auto last = parse_line(c.read_line(5s).value());
  EXPECT_EQ(last["id"], 9);
  EXPECT_TRUE(last["ok"]) << last.dump();
  EXPECT_THROW(c.read_line(5s), protocol::NoDaemon);  // and then the server closes
  EXPECT_EQ(h.ok("status")["turn"], 1);

  protocol::Client bad = h.client();
  bad.send_raw("{\"id\":10,\"cmd\":");
  ::shutdown(bad.fd(), SHUT_WR);
  EXPECT_EQ(parse_line(bad.read_line(5s).value())["error"]["code"], "bad_json");
}

TEST_F(ControlTest, ThreeHundredConnectionsAtOnce) {
  constexpr int kClients = 300;
  std::vector<protocol::Client> clients;
  clients.reserve(kClients);
  for (int i = 0; i < kClients; ++i) clients.push_back(h.client());
  for (int i = 0; i < kClients; ++i) {
    clients[i].send_raw(protocol::to_line(json{{"id", i}, {"cmd", "status"}}));
  }
  int ok = 0;
  for (int i = 0; i < kClients; ++i) {
    auto line = clients[i].read_line(20s);
    ASSERT_TRUE(line) << "client " << i;
    auto r = parse_line(*line);
    EXPECT_EQ(r["id"], i);
    ok += r.value("ok", false) ? 1 : 0;
  }
  EXPECT_EQ(ok, kClients);
  EXPECT_TRUE(h.call("status")["ok"]);
}

// --- clients that do not read ---------------------------------------------------

// Pipelines requests and reads no reply, until neither the server nor the socket
// takes any more: the server then holds a reply it cannot write.
void send_without_reading(int fd) {
  std::string batch;
  for (int i = 0; i < 200; ++i) batch += "{\"cmd\":\"status\"}\n";
  size_t offset = 0;
  int stalls = 0;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (stalls < 20 && std::chrono::steady_clock::now() < deadline) {
    ssize_t n =
        ::send(fd, batch.data() + offset, batch.size() - offset, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      offset = (offset + static_cast<size_t>(n)) % batch.size();
      stalls = 0;
    } else {
      ++stalls;
      std::this_thread::sleep_for(20ms);
    }
  }
}

TEST(ControlSlowClient, ClientsThatNeverReadHoldNoWorker) {
  daemon::RuntimeOptions o;
  o.write_timeout = 30s;  // long: a worker waiting on one of them would show
  RuntimeHarness h(o);
  h.start_task();
  std::vector<protocol::Client> slow;
  for (int i = 0; i < 6; ++i) {  // more than the 4 workers
    slow.push_back(h.client());
    send_without_reading(slow.back().fd());
  }
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(h.ok("turn")["turn"], 1);
  h.ok("grant", {{"reason", "still served"}});
  EXPECT_EQ(h.ok("revoke")["revoked"], 1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

// A worker writes its reply itself as far as the socket takes it; the loop
// writes the rest. A client that sends many requests before reading any reply
// fills its socket, so replies are cut anywhere, mid-line too (the large ones
// below are ten times what a send takes at once): it must still get every
// reply, whole and in order, and the daemon serve others meanwhile.
TEST(ControlSlowClient, WorkerRepliesTheSocketCannotTakeArriveWholeAndInOrder) {
  daemon::RuntimeOptions o;
  o.write_timeout = 30s;
  RuntimeHarness h(o);
  for (int i = 0; i < 8; ++i) {
    h.ok("memory.save", {{"title", "pad " + std::to_string(i)},
                         {"content", "bigpad " + std::string(60 * 1024, 'a' + i)}});
  }
  protocol::Client c = h.client();
  constexpr int kRequests = 600;
  auto request = [](int i) {
    // Every tenth a search whose reply carries ~480 KB; the others an unknown
    // command, ~300 bytes. Workers answer both.
    return i % 10 == 0 ? json{{"id", i},
                              {"cmd", "memory.search"},
                              {"args", {{"query", "bigpad"}, {"limit", 8}}}}
                       : json{{"id", i}, {"cmd", "no-such-command"}};
  };
  std::thread sender([fd = c.fd(), &request] {
    for (int i = 1; i <= kRequests; ++i) {
      const std::string line = request(i).dump() + "\n";
      for (size_t at = 0; at < line.size();) {
        ssize_t n = ::send(fd, line.data() + at, line.size() - at, MSG_NOSIGNAL);
        if (n <= 0) return;
        at += static_cast<size_t>(n);
      }
    }
  });
  std::this_thread::sleep_for(500ms);  // replies pile up against a full socket
  EXPECT_TRUE(h.call("status")["ok"]) << "another client was not served meanwhile";
  for (int i = 1; i <= kRequests; ++i) {
    auto line = c.read_line(10s);
    ASSERT_TRUE(line) << "no reply " << i;
    json reply = json::parse(*line);  // a torn or interleaved line does not parse
    ASSERT_EQ(reply["id"], i);
    if (i % 10 == 0) {
      ASSERT_EQ(reply["result"]["hits"].size(), 8u) << line->substr(0, 200);
    } else {
      ASSERT_EQ(reply["error"]["code"], "unknown_command");
    }
  }
  sender.join();
}

TEST(ControlSlowClient, ClientThatNeverReadsIsDropped) {
  daemon::RuntimeOptions o;
  o.write_timeout = 300ms;
  RuntimeHarness h(o);
  protocol::Client slow = h.client();
  send_without_reading(slow.fd());
  std::this_thread::sleep_for(2s);  // several write timeouts
  // What was written can still be read, then the connection ends.
  auto deadline = std::chrono::steady_clock::now() + 20s;
  bool ended = false;
  while (!ended && std::chrono::steady_clock::now() < deadline) {
    try {
      slow.read_line(1s);
    } catch (const protocol::NoDaemon&) {
      ended = true;
    }
  }
  EXPECT_TRUE(ended) << "the server kept a client that read nothing for 2 s";
  EXPECT_TRUE(h.call("status")["ok"]);
}

TEST(ControlSlowClient, StopDoesNotWaitForAWatcherThatNeverReads) {
  daemon::RuntimeOptions o;
  o.write_timeout = 30s;
  RuntimeHarness h(o);
  protocol::Client w = h.client();
  ASSERT_TRUE(w.call("watch")["ok"]);
  // Far more events than the socket buffers hold: the stream blocks writing.
  // (Few and large, so that the gate's report queue drains long before stop().)
  std::string padding(16 * 1024, 'p');
  for (int i = 0; i < 300; ++i) {
    h.runtime().reporter().refusal(gate::Op::kWrite, padding + "/" + std::to_string(i),
                                   gate::Caller{::getpid(), 1000, 1000},
                                   gate::DenyReason::kNoLease);
  }
  std::this_thread::sleep_for(2s);
  auto t0 = std::chrono::steady_clock::now();
  h.close();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(ControlSocket, LiveDaemonIsNotReplaced) {
  RuntimeHarness a;
  daemon::RuntimeOptions o;
  o.socket_path = a.socket();
  TempDir other_root;
  base::UniqueFd fd(::open(other_root.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  daemon::Runtime b(fd.get(), other_root.path(), o);
  try {
    b.start_control();
    FAIL() << "a second daemon took over a live socket";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "io_error");
    EXPECT_NE(std::string(e.what()).find("already serving"), std::string::npos);
  }
  EXPECT_TRUE(a.call("status")["ok"]);
}

TEST(ControlSocket, StaleSocketIsReplaced) {
  TempDir tmp;
  std::string path = tmp.path() + "/stale.sock";
  {
    base::UniqueFd s(::socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    ASSERT_EQ(::bind(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  }  // closed without unlinking: a dead daemon's leftover
  daemon::RuntimeOptions o;
  o.socket_path = path;
  RuntimeHarness h(o);
  EXPECT_TRUE(h.call("status")["ok"]);
}

TEST(ControlSocket, RegularFileIsNotReplaced) {
  TempDir tmp;
  std::string path = tmp.path() + "/not-a-socket";
  { std::ofstream(path) << "keep me"; }
  daemon::RuntimeOptions o;
  o.socket_path = path;
  EXPECT_THROW(RuntimeHarness h(o), Error);
  EXPECT_EQ(read_file(path), "keep me");
}

TEST(ControlRuntime, StopIsIdempotentAndRemovesTheSocket) {
  RuntimeHarness h;
  h.runtime().stop();
  h.runtime().stop();
  EXPECT_THROW(protocol::Client::connect(h.socket()), protocol::NoDaemon);
}

}  // namespace
}  // namespace leasefs::control::test

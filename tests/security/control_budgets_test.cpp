// Attack class: starving the approver. The agent (a real second uid) holds all
// it can of the control socket: hundreds of connections, dozens of watch
// streams, lines it never finishes, and pipelined requests whose replies it never
// reads. An approver's turn, grant, revoke and approve must each still be
// answered within one second (a liveness deadline: missing it means starved),
// and the refusals must be visible: in `status` and as `watch` events.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/security/control_daemon.hpp"
#include "tests/support/control_client.hpp"

namespace leasefs::test {
namespace {

using nlohmann::json;

void send_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return;  // the peer's buffer is full, or we were refused: fine
    off += static_cast<size_t>(n);
  }
}

TEST(ControlBudgets, ApproversAreAnsweredWithinASecondWhateverTheAgentHolds) {
  ControlDaemon d;
  auto m = d.mount();
  ASSERT_EQ(m.exit_code, 0) << m.output;
  ControlClient root(d.socket());
  ASSERT_TRUE(root.call("start", {{"description", "budgets"}}).value("ok", false));
  ControlClient watch(d.socket());
  ASSERT_TRUE(watch.call("watch").value("ok", false));

  // One honest request first (R_0001), for the approver to approve later.
  pid_t asker = spawn_agent([&] {
    ControlClient c(d.socket());
    return c.call("request", {{"reason", "edit a"}}).value("ok", false) ? 0 : 1;
  });
  ASSERT_EQ(wait_child(asker, 10'000), 0);

  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t agent = spawn_agent([&] {
    rlimit lim{4096, 4096};
    ::setrlimit(RLIMIT_NOFILE, &lim);
    std::vector<int> fds;
    // Watch streams, as many as it gets.
    for (int i = 0; i < 80; ++i) {
      int fd = connect_unix(d.socket());
      if (fd < 0) break;
      send_all(fd, "{\"id\":1,\"cmd\":\"watch\"}\n");
      fds.push_back(fd);
    }
    // Pipelined requests whose replies are never read.
    std::string flood;
    for (int i = 0; i < 400; ++i) flood += "{\"id\":1,\"cmd\":\"status\"}\n";
    for (int i = 0; i < 20; ++i) {
      int fd = connect_unix(d.socket());
      if (fd < 0) break;
      send_all(fd, flood);
      fds.push_back(fd);
    }
    // Hundreds of connections, each with half a line.
    for (int i = 0; i < 700; ++i) {
      int fd = connect_unix(d.socket());
      if (fd < 0) break;
      send_all(fd, "{\"id\":1,\"cmd\":\"requ");
      fds.push_back(fd);
    }
    char one = 1;
    ssize_t w = ::write(ready[1], &one, 1);
    (void)w;
    ::pause();
    return 0;
  });
  ::close(ready[1]);
  char one = 0;
  ASSERT_EQ(::read(ready[0], &one, 1), 1);
  ::close(ready[0]);

  // Each on a new connection, as a person running leasectl would.
  auto answered = [&](const std::string& cmd, json args) {
    try {
      ControlClient c(d.socket());
      json reply = c.call(cmd, std::move(args), 1'000);
      return reply.value("ok", false) ? std::string("ok") : reply.dump();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(answered("grant", {{"reason", "go"}}), "ok");
  EXPECT_EQ(answered("revoke", json::object()), "ok");
  EXPECT_EQ(answered("approve", {{"id", "R_0001"}}), "ok");
  EXPECT_EQ(answered("turn", json::object()), "ok");

  // The refusals are counted in status and were told to watchers.
  json status = root.call("status");
  ASSERT_TRUE(status.value("ok", false)) << status.dump();
  json refused = status["result"].value("budget_refusals", json::object());
  EXPECT_GT(refused.value("connections", 0), 0) << status.dump();
  EXPECT_GT(refused.value("watch_streams", 0), 0) << status.dump();
  bool told = false;
  for (int i = 0; i < 200 && !told; ++i) {
    try {
      json event = json::parse(watch.read_line(100));
      told = event.value("type", "") == "budget_refused";
    } catch (const std::exception&) {
    }
  }
  EXPECT_TRUE(told) << "no budget_refused event reached the approver's watch";
  kill_child(agent);
}

}  // namespace
}  // namespace leasefs::test

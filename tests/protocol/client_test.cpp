// protocol::Client against a socket the test serves itself.
#include "protocol/client.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace leasefs::protocol {
namespace {

using namespace std::chrono_literals;

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path = dir.path() + "/s.sock";
    listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(listener, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(listener, 1), 0);
  }
  void TearDown() override {
    if (served >= 0) ::close(served);
    ::close(listener);
  }
  int accept_one() { return served = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC); }

  test::TempDir dir;
  std::string path;
  int listener = -1;
  int served = -1;
};

// The bridge waits with poll() on a watch connection, then reads what came with
// a timeout of 0: the line the socket holds must come back, or the wait spins
// on a readable socket until its re-poll (and never wakes on events).
TEST_F(ClientTest, AZeroTimeoutReadsALineTheSocketAlreadyHolds) {
  Client c = Client::connect(path);
  ASSERT_GE(accept_one(), 0);
  EXPECT_EQ(c.read_line(0ms), std::nullopt);  // nothing yet
  const std::string two = "{\"event\":1}\n{\"event\":2}\n{\"part";
  ASSERT_EQ(::send(served, two.data(), two.size(), 0), static_cast<ssize_t>(two.size()));
  pollfd p{c.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  EXPECT_EQ(c.read_line(0ms), "{\"event\":1}");
  EXPECT_EQ(c.read_line(0ms), "{\"event\":2}");
  EXPECT_EQ(c.read_line(0ms), std::nullopt);  // a partial line waits for its end
  ASSERT_EQ(::send(served, "\":3}\n", 5, 0), 5);
  EXPECT_EQ(c.read_line(5s), "{\"part\":3}");
  ::close(served);
  served = -1;
  EXPECT_THROW(c.read_line(0ms), NoDaemon);  // a hang-up is said at once, too
}

}  // namespace
}  // namespace leasefs::protocol

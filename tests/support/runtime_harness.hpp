// A real Runtime over a temporary root, its socket in a temporary directory, and
// small clients to talk to it. No FUSE: the runtime gets an O_PATH fd of the root.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/unique_fd.hpp"
#include "daemon/runtime.hpp"
#include "protocol/client.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::control::test {

using leasefs::test::TempDir;

class RuntimeHarness {
 public:
  explicit RuntimeHarness(daemon::RuntimeOptions options = {}) : options_(std::move(options)) {
    root_ = tmp_.path() + "/root";
    std::filesystem::create_directories(root_);
    sock_dir_ = tmp_.path() + "/run";
    if (options_.socket_path.empty()) options_.socket_path = sock_dir_ + "/ctl.sock";
    open();
  }
  ~RuntimeHarness() { close(); }

  void open() {
    root_fd_.reset(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    runtime_ = std::make_unique<daemon::Runtime>(root_fd_.get(), root_, options_);
    runtime_->start_control();
  }
  void close() {
    if (runtime_) runtime_->stop();
    runtime_.reset();
    root_fd_.reset();
  }
  void restart() {
    close();
    open();
  }

  daemon::Runtime& runtime() { return *runtime_; }
  const std::string& socket() const { return options_.socket_path; }
  const std::string& root() const { return root_; }
  const std::string& tmp() const { return tmp_.path(); }

  protocol::Client client() { return protocol::Client::connect(socket()); }

  // One request on a new connection.
  nlohmann::json call(const std::string& cmd, nlohmann::json args = nlohmann::json::object(),
                      std::optional<std::string> key = std::nullopt) {
    protocol::Client c = client();
    return c.call(cmd, std::move(args), key);
  }
  nlohmann::json ok(const std::string& cmd, nlohmann::json args = nlohmann::json::object()) {
    auto reply = call(cmd, std::move(args));
    EXPECT_TRUE(reply.value("ok", false)) << cmd << ": " << reply.dump();
    return reply.value("result", nlohmann::json());
  }
  std::string error_code(const std::string& cmd, nlohmann::json args = nlohmann::json::object()) {
    auto reply = call(cmd, std::move(args));
    EXPECT_FALSE(reply.value("ok", true)) << cmd << ": " << reply.dump();
    return reply.value("error", nlohmann::json::object()).value("code", "");
  }

  // A task in progress.
  void start_task(const std::string& description = "fix the timeout in the fetcher") {
    ok("start", {{"description", description}});
  }

 private:
  TempDir tmp_;
  std::string root_;
  std::string sock_dir_;
  daemon::RuntimeOptions options_;
  base::UniqueFd root_fd_;
  std::unique_ptr<daemon::Runtime> runtime_;
};

inline nlohmann::json parse_line(const std::string& line) {
  return nlohmann::json::parse(line, nullptr, false);
}

}  // namespace leasefs::control::test

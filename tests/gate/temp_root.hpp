// A temporary project root for tests, removed with everything in it.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/unique_fd.hpp"

namespace leasefs::testing {

class TempRoot {
 public:
  TempRoot() {
    char tmpl[] = "/tmp/leasefs-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
    fd_.reset(::open(path_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  ~TempRoot() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }
  std::string longrun(const std::string& name) const { return path_ + "/.longrun/" + name; }

  static std::string read(const std::string& file) {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static void write(const std::string& file, const std::string& content) {
    std::ofstream(file) << content;
  }

 private:
  std::string path_;
  base::UniqueFd fd_;
};

}  // namespace leasefs::testing

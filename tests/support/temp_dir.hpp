// A fresh directory under $TMPDIR (or /tmp) for one test, removed with everything
// in it at scope end. The one temp-dir helper of the test suite.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "base/unique_fd.hpp"

namespace leasefs::test {

// Makes a fresh directory named PREFIX + six random characters.
inline std::string make_temp_dir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "XXXXXX";
  if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed for " + templ);
  return templ;
}

inline void remove_tree(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "leasefs-test-")
      : path_(make_temp_dir(prefix)),
        fd_(::open(path_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)) {}
  ~TempDir() { remove_tree(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }  // O_PATH, for code that takes a root fd
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Used as a project root: a file of its state plane.
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

}  // namespace leasefs::test

#include "report/process_names.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "base/unique_fd.hpp"

namespace leasefs::report {

std::string process_name(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/comm";
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return "?";
  char buf[64];
  ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n <= 0) return "?";
  std::string name(buf, static_cast<size_t>(n));
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

std::string ProcessNames::of(const gate::Caller& caller, gate::Op op, std::string_view path,
                             int64_t now) {
  std::string key =
      std::to_string(caller.pid) + '/' + std::string(gate::op_name(op)) + '/' + std::string(path);
  std::lock_guard lock(mu_);
  // A storm of distinct refusals (a refused `rm -rf`) must not make every
  // refusal scan a huge map: sweep at most once per window, and past twice the
  // cap start over (only names are lost: they are read again).
  if (recent_.size() > kMaxRecent && now - last_sweep_ms_ >= kWindowMs) {
    std::erase_if(recent_, [&](const auto& kv) { return now - kv.second.first_ms >= kWindowMs; });
    last_sweep_ms_ = now;
  }
  if (recent_.size() > 2 * kMaxRecent) recent_.clear();
  auto it = recent_.find(key);
  if (it != recent_.end() && now - it->second.first_ms < kWindowMs) return it->second.process;
  std::string process = process_name(caller.pid);
  recent_.insert_or_assign(std::move(key), Recent{now, process});
  return process;
}

}  // namespace leasefs::report

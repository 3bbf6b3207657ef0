// Reading the journal back: the turns it holds, a turn's entries, a blob's path.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "base/sha256.hpp"
#include "journal/journal.hpp"

namespace leasefs::journal {

using nlohmann::json;

std::vector<uint64_t> Journal::turns() const {
  std::vector<uint64_t> out;
  int fd = ::openat(dir_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return out;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return out;
  }
  while (dirent* de = ::readdir(d)) {
    char* end = nullptr;
    unsigned long long t = std::strtoull(de->d_name, &end, 10);
    if (end && end != de->d_name && *end == '\0') out.push_back(t);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Entry> Journal::entries(uint64_t turn) const {
  std::vector<Entry> out;
  const std::string name = std::to_string(turn) + "/index.jsonl";
  base::UniqueFd fd(::openat(dir_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return out;
  std::string text;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) break;  // torn last line: its mutation never ran
    std::string_view line(text.data() + start, nl - start);
    start = nl + 1;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    Entry e = Entry::from_json(j);
    e.hash = base::sha256_hex(line);
    out.push_back(std::move(e));
  }
  return out;
}

std::string Journal::blob_path(uint64_t turn, const std::string& blob) const {
  return "/proc/self/fd/" + std::to_string(dir_.get()) + "/" + std::to_string(turn) + "/" + blob;
}

}  // namespace leasefs::journal

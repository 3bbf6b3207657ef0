#include "memory/audit_log.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/clock.hpp"
#include "base/json_text.hpp"
#include "base/sha256.hpp"
#include "memory/memory_error.hpp"
#include "memory/schema.hpp"

namespace leasefs::memory {
namespace {

using nlohmann::json;

const std::string kZeroHash(64, '0');

std::string canonical(std::uint64_t seq, std::int64_t ts_ms, const json& event,
                      const std::string& prev) {
  return base::json_text(json{{"seq", seq}, {"ts_ms", ts_ms}, {"event", event}, {"prev", prev}});
}

// Appends the record's line to `lines` and returns its hash, from the event
// serialized once: dumping json objects that hold the event, as canonical() does,
// would copy it twice and serialize it twice for every record. nlohmann sorts
// keys, so the hashed bytes are {"event":E,"prev":P,"seq":S,"ts_ms":T}, exactly
// what canonical() gives (verify() recomputes it that way; the tests hold the
// two equal), and the line is the same with "hash" after "event".
std::string append_line(std::string& lines, std::uint64_t seq, std::int64_t ts_ms,
                        const std::string& event_text, const std::string& prev) {
  const std::string after_hash = ",\"prev\":" + base::json_text(prev) +
                                 ",\"seq\":" + std::to_string(seq) +
                                 ",\"ts_ms\":" + std::to_string(ts_ms) + "}";
  std::string hash = base::sha256_hex("{\"event\":" + event_text + after_hash);
  lines += "{\"event\":";
  lines += event_text;
  lines += ",\"hash\":";
  lines += base::json_text(hash);
  lines += after_hash;
  lines += '\n';
  return hash;
}

[[noreturn]] void throw_errno(std::string_view what, const std::string& path) {
  const int error = errno;
  throw MemoryError("audit: " + std::string(what) + " " + path + ": " + std::strerror(error));
}

// One line of the log, parsed and checked for shape (not for chain links).
struct ParsedLine {
  std::uint64_t seq = 0;
  std::int64_t ts_ms = 0;
  json event;
  std::string prev;
  std::string hash;
};

std::optional<ParsedLine> parse_line(std::string_view line) {
  json value = json::parse(line, nullptr, false);
  if (value.is_discarded() || !value.is_object() || value.size() != 5) return std::nullopt;
  const auto seq = value.find("seq");
  const auto ts = value.find("ts_ms");
  const auto event = value.find("event");
  const auto prev = value.find("prev");
  const auto hash = value.find("hash");
  if (seq == value.end() || !seq->is_number_unsigned() || ts == value.end() ||
      !ts->is_number_integer() || event == value.end() || prev == value.end() ||
      !prev->is_string() || hash == value.end() || !hash->is_string()) {
    return std::nullopt;
  }
  ParsedLine parsed;
  parsed.seq = seq->get<std::uint64_t>();
  parsed.ts_ms = ts->get<std::int64_t>();
  parsed.event = *event;
  parsed.prev = prev->get<std::string>();
  parsed.hash = hash->get<std::string>();
  return parsed;
}

std::string read_all(int fd, const std::string& path) {
  std::string data;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("read", path);
    }
    if (n == 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  return data;
}

// Finds the last well-formed record, reading backwards from the end of the file
// in growing chunks so that opening a long log stays cheap.
std::optional<ParsedLine> read_last_record(int fd, off_t size, const std::string& path) {
  std::size_t chunk = 64 * 1024;
  for (;;) {
    const off_t start = size > static_cast<off_t>(chunk) ? size - static_cast<off_t>(chunk) : 0;
    std::string tail(static_cast<std::size_t>(size - start), '\0');
    std::size_t done = 0;
    while (done < tail.size()) {
      const ssize_t n =
          ::pread(fd, tail.data() + done, tail.size() - done, start + static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw_errno("read", path);
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    tail.resize(done);
    // Lines wholly inside the chunk, last first. The first line of a chunk
    // that does not start at offset 0 may be cut, so it is not trusted.
    std::size_t end = tail.size();
    while (end > 0) {
      const std::size_t newline = end >= 1 ? tail.rfind('\n', end - 1) : std::string::npos;
      if (newline == std::string::npos && start != 0) break;
      const std::size_t begin = newline == std::string::npos ? 0 : newline + 1;
      if (begin < end) {
        if (auto parsed = parse_line(std::string_view(tail).substr(begin, end - begin))) {
          return parsed;
        }
      }
      if (newline == std::string::npos) break;
      end = newline;
    }
    if (start == 0) return std::nullopt;
    chunk *= 2;
  }
}

struct Anchor {
  std::uint64_t seq = 0;
  std::string hash;
};

std::optional<Anchor> read_anchor(SqliteDb& db) {
  auto stmt = db.prepare("SELECT seq, hash FROM audit_head WHERE id = 1");
  if (!stmt.step()) return std::nullopt;
  return Anchor{static_cast<std::uint64_t>(stmt.column_int64(0)), stmt.column_text(1)};
}

// What the chain itself says was lost: an "audit_lost" record (a batch that could
// not be appended), a "reports_dropped" record (gate reports that came after the
// stop) and a "dropped_before" count (an event queue that overflowed).
struct Losses {
  std::uint64_t count = 0;
  std::string detail;
};

void note_loss(std::uint64_t seq, const json& event, Losses& losses) {
  if (!event.is_object()) return;
  auto number = [&](const char* key) -> std::uint64_t {
    auto it = event.find(key);
    return it != event.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
  };
  const auto type = event.find("type");
  const std::string kind = type != event.end() && type->is_string() ? type->get<std::string>() : "";
  std::uint64_t n = 0;
  std::string what;
  if (kind == "audit_lost") {
    n = number("count");
    auto types = event.find("types");
    what = " (" + (types != event.end() ? base::json_text(*types) : std::string("?")) + ")";
  } else if (kind == "reports_dropped") {
    n = number("count");
    what = " gate report(s): " + std::to_string(number("write_closed")) + " write_closed, " +
           std::to_string(number("refusals")) + " refusals, " + std::to_string(number("allowed")) +
           " allowed";
  }
  if (const std::uint64_t before = number("dropped_before"); before > 0) {
    n += before;
    what += " (" + std::to_string(before) + " dropped before it)";
  }
  if (n == 0) return;
  losses.count += n;
  if (!losses.detail.empty()) losses.detail += "; ";
  losses.detail += "seq " + std::to_string(seq) + ": " + std::to_string(n) + " lost" + what;
}

VerifyResult bad(std::size_t records, std::size_t line, std::string kind, std::string message) {
  return VerifyResult{false, records, line, std::move(kind), std::move(message)};
}

// The file's lines; a final line without '\n' is a torn (cut) write.
std::vector<std::string_view> split_lines(std::string_view data, bool* torn_tail) {
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos < data.size();) {
    const std::size_t newline = data.find('\n', pos);
    if (newline == std::string::npos) {
      lines.emplace_back(data.substr(pos));
      *torn_tail = true;
      break;
    }
    lines.emplace_back(data.substr(pos, newline - pos));
    pos = newline + 1;
  }
  return lines;
}

// The chain as verified so far: its last record, and how many passed.
struct ChainEnd {
  std::uint64_t seq = 0;
  std::string hash = kZeroHash;
  std::size_t records = 0;
};

// Why line `i` does not continue the chain that ends at `end`, or nullopt.
std::optional<VerifyResult> check_record(const std::vector<std::optional<ParsedLine>>& parsed,
                                         std::size_t i, bool torn_tail, const ChainEnd& end,
                                         const std::unordered_set<std::string>& hashes) {
  const std::size_t line_no = i + 1;
  const std::size_t records = end.records;
  if (!parsed[i]) {
    const bool is_last = i + 1 == parsed.size();
    if (is_last && torn_tail) {
      return bad(records, line_no, "truncated",
                 "line " + std::to_string(line_no) + " is cut short (no end of line)");
    }
    return bad(records, line_no, "malformed",
               "line " + std::to_string(line_no) + " is not a well-formed audit record");
  }
  const ParsedLine& rec = *parsed[i];
  if (base::sha256_hex(canonical(rec.seq, rec.ts_ms, rec.event, rec.prev)) != rec.hash) {
    return bad(records, line_no, "edited",
               "record seq " + std::to_string(rec.seq) + " on line " + std::to_string(line_no) +
                   " does not match its hash: its content was changed");
  }
  const std::uint64_t expected = end.seq + 1;
  if (rec.seq < expected) {
    return bad(records, line_no, "reordered",
               "line " + std::to_string(line_no) + " has seq " + std::to_string(rec.seq) +
                   " after seq " + std::to_string(end.seq));
  }
  if (rec.seq > expected) {
    const bool later = std::any_of(
        parsed.begin() + static_cast<std::ptrdiff_t>(i) + 1, parsed.end(),
        [&](const auto& other) { return other && other->seq >= expected && other->seq < rec.seq; });
    if (later) {
      return bad(records, line_no, "reordered",
                 "line " + std::to_string(line_no) + " has seq " + std::to_string(rec.seq) +
                     " but seq " + std::to_string(expected) + " comes later in the file");
    }
    return bad(records, line_no, "deleted",
               "records " + std::to_string(expected) + ".." + std::to_string(rec.seq - 1) +
                   " are missing before line " + std::to_string(line_no));
  }
  if (rec.prev != end.hash) {
    const bool points_elsewhere = hashes.count(rec.prev) != 0;
    return bad(records, line_no, points_elsewhere ? "reordered" : "edited",
               "record seq " + std::to_string(rec.seq) + " on line " + std::to_string(line_no) +
                   (points_elsewhere ? " links to a record that is not its predecessor"
                                     : " links to a previous hash that does not exist"));
  }
  return std::nullopt;
}

// Whether the file ends with the record the database says was written last
// (`lines`: how many lines the file has), or why not.
std::optional<VerifyResult> check_anchor(const std::optional<Anchor>& anchor, const ChainEnd& end,
                                         std::size_t lines) {
  if (!anchor) return std::nullopt;
  if (end.seq < anchor->seq) {
    return bad(end.records, lines + 1, "truncated",
               "the log ends at seq " + std::to_string(end.seq) + " but seq " +
                   std::to_string(anchor->seq) + " was written: the tail was cut off");
  }
  if (end.seq == anchor->seq && end.hash != anchor->hash) {
    return bad(
        end.records, lines, "edited",
        "the last record (seq " + std::to_string(end.seq) + ") is not the one that was written");
  }
  return std::nullopt;
}

}  // namespace

AuditLog::AuditLog(std::string log_path, const std::string& db_path, Options options)
    : path_(std::move(log_path)), options_(options), db_(open_database(db_path)) {
  // The anchor need not be synced: audit.jsonl is, before the anchor is written,
  // and an anchor that a power loss leaves behind the file is accepted (only one
  // ahead of it means lines were cut off). So a batch costs one sync, not two,
  // and the syncs of the ledger and the state log have the disk to themselves.
  db_.exec("PRAGMA synchronous = NORMAL");
  open_and_continue();
}

void AuditLog::open_and_continue() {
  fd_ = base::UniqueFd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640));
  if (!fd_) throw_errno("open", path_);

  base::UniqueFd reader(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (!reader) throw_errno("open", path_);
  struct stat st {};
  if (::fstat(reader.get(), &st) != 0) throw_errno("stat", path_);

  last_seq_ = 0;
  last_hash_ = kZeroHash;
  if (auto last = read_last_record(reader.get(), st.st_size, path_)) {
    last_seq_ = last->seq;
    last_hash_ = last->hash;
  }
  // A torn last line (a crash mid-write) is closed off so the next record
  // starts on a line of its own; verify() reports the fragment.
  if (st.st_size > 0) {
    char last_byte = '\n';
    if (::pread(reader.get(), &last_byte, 1, st.st_size - 1) != 1) throw_errno("read", path_);
    if (last_byte != '\n') {
      spdlog::warn("audit: {} ends in a partial line; closing it off", path_);
      if (::write(fd_.get(), "\n", 1) != 1) throw_errno("write", path_);
    }
  }
  // If lines were cut off the end, continue after the anchor rather than after
  // the cut: the gap stays visible instead of being papered over.
  if (auto anchor = read_anchor(db_); anchor && anchor->seq > last_seq_) {
    spdlog::warn("audit: {} ends at seq {} but the anchor says {}; the tail was lost", path_,
                 last_seq_, anchor->seq);
    last_seq_ = anchor->seq;
    last_hash_ = anchor->hash;
  }
}

AuditRecord AuditLog::append(const json& event) {
  return append_batch({base::JsonText(event)}).front();
}

// A batch costs one write(2), one fdatasync and one anchor update, however many
// records it holds: the daemon appends what has queued up since the last batch.
std::vector<AuditRecord> AuditLog::append_batch(const std::vector<base::JsonText>& events) {
  std::lock_guard lock(mutex_);
  std::vector<AuditRecord> records;
  records.reserve(events.size());
  std::string lines;
  std::uint64_t seq = last_seq_;
  std::string prev = last_hash_;
  for (const base::JsonText& event : events) {
    AuditRecord record;
    record.seq = ++seq;
    record.ts_ms = base::now_ms();
    record.hash = append_line(lines, record.seq, record.ts_ms, event.str(), prev);
    prev = record.hash;
    records.push_back(std::move(record));
  }
  if (records.empty()) return records;

  // One write(2); O_APPEND places it at the end atomically. A batch that fails
  // (a full disk cuts a write short) is cut off again, so that the log never
  // holds part of a batch and a later one, or the same one retried, follows
  // whole lines.
  const off_t end = ::lseek(fd_.get(), 0, SEEK_END);
  auto fail = [&](const char* what) {
    const int err = errno;
    if (end >= 0) (void)::ftruncate(fd_.get(), end);
    errno = err;
    throw_errno(what, path_);
  };
  for (;;) {
    const ssize_t n = ::write(fd_.get(), lines.data(), lines.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write");
    if (static_cast<std::size_t>(n) != lines.size()) {
      errno = ENOSPC;
      fail("short write to");
    }
    break;
  }
  if (options_.fsync && ::fdatasync(fd_.get()) != 0) fail("fdatasync");
  last_seq_ = seq;
  last_hash_ = prev;

  auto stmt = db_.cached(
      "INSERT INTO audit_head (id, seq, hash) VALUES (1, ?, ?) "
      "ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash");
  stmt->bind_all(static_cast<std::int64_t>(last_seq_), last_hash_);
  stmt->run();
  return records;
}

std::size_t AuditLog::count() {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(last_seq_);
}

std::string AuditLog::contents() {
  std::lock_guard lock(mutex_);
  base::UniqueFd reader(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (!reader) throw_errno("open", path_);
  return read_all(reader.get(), path_);
}

std::vector<json> AuditLog::select(const AuditQuery& query, std::size_t max,
                                   std::size_t* left_out) {
  const std::string data = contents();
  std::deque<json> events;
  AuditMatcher matcher(query);
  *left_out = 0;
  for (std::size_t pos = 0; pos < data.size();) {
    std::size_t newline = data.find('\n', pos);
    if (newline == std::string::npos) newline = data.size();
    auto parsed = parse_line(std::string_view(data).substr(pos, newline - pos));
    pos = newline + 1;
    if (!parsed || !matcher.matches(parsed->event, parsed->ts_ms)) continue;
    events.push_back(std::move(parsed->event));
    if (events.size() > max) {
      events.pop_front();
      ++*left_out;
    }
  }
  return {std::make_move_iterator(events.begin()), std::make_move_iterator(events.end())};
}

std::vector<AuditLink> AuditLog::links() {
  const std::string data = contents();
  std::vector<AuditLink> out;
  bool torn_tail = false;
  for (std::string_view line : split_lines(data, &torn_tail)) {
    auto parsed = parse_line(line);
    if (!parsed) continue;
    AuditLink link;
    link.seq = parsed->seq;
    link.hash = std::move(parsed->hash);
    if (parsed->event.is_object()) {
      const auto type = parsed->event.find("type");
      if (type != parsed->event.end() && type->is_string()) link.type = type->get<std::string>();
      const auto to = parsed->event.find("to");
      if (to != parsed->event.end() && to->is_string()) link.to = to->get<std::string>();
      const auto size = parsed->event.find("size");
      if (size != parsed->event.end() && size->is_number_unsigned()) {
        link.size = size->get<std::uint64_t>();
      }
    }
    out.push_back(std::move(link));
  }
  return out;
}

std::vector<RawRecord> AuditLog::lines_after(std::uint64_t after, std::size_t max) {
  const std::string data = contents();
  std::vector<RawRecord> out;
  for (std::size_t pos = 0; pos < data.size() && out.size() < max;) {
    std::size_t newline = data.find('\n', pos);
    if (newline == std::string::npos) break;  // a line still being written
    std::string_view line = std::string_view(data).substr(pos, newline - pos);
    pos = newline + 1;
    auto parsed = parse_line(line);
    if (!parsed) break;  // a shipper must not skip past a damaged record
    if (parsed->seq <= after) continue;
    out.push_back({parsed->seq, std::string(line)});
  }
  return out;
}

VerifyResult AuditLog::verify() {
  std::lock_guard lock(mutex_);
  base::UniqueFd reader(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (!reader) throw_errno("open", path_);
  const std::string data = read_all(reader.get(), path_);
  const std::optional<Anchor> anchor = read_anchor(db_);

  bool torn_tail = false;
  std::vector<std::optional<ParsedLine>> parsed;
  std::unordered_set<std::string> hashes;
  for (std::string_view line : split_lines(data, &torn_tail)) {
    parsed.push_back(parse_line(line));
    if (parsed.back()) hashes.insert(parsed.back()->hash);
  }

  ChainEnd end;
  Losses losses;
  for (std::size_t i = 0; i < parsed.size(); ++i) {
    if (auto broken = check_record(parsed, i, torn_tail, end, hashes)) return *broken;
    const ParsedLine& rec = *parsed[i];
    end.seq = rec.seq;
    end.hash = rec.hash;
    ++end.records;
    note_loss(rec.seq, rec.event, losses);
  }
  if (auto broken = check_anchor(anchor, end, parsed.size())) return *broken;
  if (losses.count > 0) {
    // The chain is whole, but it says that events never reached it.
    return bad(end.records, 0, "lost",
               "the chain is intact but records that " + std::to_string(losses.count) +
                   " event(s) were lost before they reached it: " + losses.detail);
  }
  return VerifyResult{
      true, end.records, 0, {}, "audit chain intact: " + std::to_string(end.records) + " records"};
}

}  // namespace leasefs::memory

// The audit log: <root>/.longrun/audit.jsonl, append-only and hash-chained.
//
// Each line is one JSON object:
//   {"event":{...},"hash":"<hex>","prev":"<hex>","seq":N,"ts_ms":T}
// hash = SHA-256 over the canonical serialization of {seq, ts_ms, event, prev}
// (nlohmann's dump() of an object with exactly those keys; its keys are sorted,
// so the bytes are deterministic); prev is the previous record's hash, 64 zeros
// for the first. Changing, removing or moving any line breaks the chain.
//
// Cutting lines off the end leaves a valid chain, so the last seq and hash are
// also kept outside the log, in memory.db (table audit_head), updated after
// every append. verify() compares the file's last record with that anchor.
// The log is written after the record is durable in the file and before the
// anchor, so a crash between the two leaves the file ahead of the anchor, which
// is not an error.
//
// The log is never read to resume anything: opening reads only the tail (to
// continue the chain); verify() and events_since() are for people (`leasectl
// audit verify`, `leasectl watch --since`).
// One AuditLog per file: appends are serialized by a mutex, each line is one
// write(2) on an O_APPEND fd, then fdatasync (configurable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/json_text.hpp"
#include "base/unique_fd.hpp"
#include "memory/audit_query.hpp"
#include "memory/sqlite_db.hpp"

namespace leasefs::memory {

struct AuditRecord {
  std::uint64_t seq = 0;
  std::int64_t ts_ms = 0;
  std::string hash;
};

// A record as the signed heads see it (signing/head_verifier.hpp): its place in
// the chain, its hash, its event's type, and the event's "size" and "to" (a
// transition's new status), if any.
struct AuditLink {
  std::uint64_t seq = 0;
  std::string hash;
  std::string type;
  std::uint64_t size = 0;
  std::string to;
};

// One record as it is in the file: its seq and its exact line (no newline).
struct RawRecord {
  std::uint64_t seq = 0;
  std::string line;
};

struct VerifyResult {
  bool ok = true;
  std::size_t records = 0;         // records read that passed every check
  std::size_t first_bad_line = 0;  // 1-based; 0 when ok
  // "edited", "deleted", "reordered", "truncated" or "malformed"; "lost" when the
  // chain is whole but records that events were lost before reaching it (an
  // "audit_lost" or "reports_dropped" record, a "dropped_before" count); empty when ok
  std::string kind;
  std::string message;
};

class AuditLog {
 public:
  struct Options {
    bool fsync = true;  // fdatasync after every line
  };

  // Opens (creating) the log and the anchor database; the caller creates the
  // directory. Throws MemoryError.
  AuditLog(std::string log_path, const std::string& db_path)
      : AuditLog(std::move(log_path), db_path, Options{}) {}
  AuditLog(std::string log_path, const std::string& db_path, Options options);

  // Appends one event; returns its seq and hash. Throws MemoryError.
  AuditRecord append(const nlohmann::json& event);
  // Appends events in order as consecutive records, with one write and one sync.
  // Each event comes serialized (the event bus does it once for every reader).
  std::vector<AuditRecord> append_batch(const std::vector<base::JsonText>& events);

  // Checks the whole chain and the anchor. Never throws for a damaged log;
  // throws MemoryError only if the file cannot be read at all.
  VerifyResult verify();

  // The events `query` selects, oldest first, at most the last `max` of them;
  // `left_out` receives how many earlier ones were not returned. Lines that do
  // not parse are skipped (verify() reports them).
  std::vector<nlohmann::json> select(const AuditQuery& query, std::size_t max,
                                     std::size_t* left_out);

  // Every well-formed record, in the file's order (verify() says whether they
  // make a chain).
  std::vector<AuditLink> links();
  // The records after seq `after`, oldest first, at most `max`, each as its exact
  // line: what a shipper copies elsewhere, resuming from the last seq it holds.
  // Lines that do not parse end the answer (verify() reports them).
  std::vector<RawRecord> lines_after(std::uint64_t after, std::size_t max);

  // Records in the chain (the seq of the last one).
  std::size_t count();

  const std::string& path() const { return path_; }

 private:
  void open_and_continue();
  // The whole file as it is now, read under the lock (appends are whole lines).
  std::string contents();

  std::mutex mutex_;  // guards everything below
  std::string path_;
  Options options_;
  SqliteDb db_;
  base::UniqueFd fd_;
  std::uint64_t last_seq_ = 0;
  std::string last_hash_;
};

}  // namespace leasefs::memory

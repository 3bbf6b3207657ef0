// What memory stores: a record (checkpoint, note, ...) and a ranked search hit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace leasefs::memory {

struct Record {
  std::string id;    // readable, assigned by the store: S_0001, S_0002, ...
  std::string type;  // "checkpoint", "note", ...
  std::string title;
  std::string content;
  std::vector<std::string> keywords;
  std::string task_id;  // empty when the record belongs to no task
  std::string ref;      // caller's unique key (a checkpoint id); empty when none
  int64_t created_ms = 0;
};

struct NewRecord {
  std::string type;
  std::string title;
  std::string content;
  std::vector<std::string> keywords;
  std::string task_id;
  // When set, saving is idempotent: a second save with the same ref returns the
  // first record and writes nothing.
  std::string ref;
};

struct SearchHit {
  Record record;
  double score = 0;  // bm25: lower is better, as SQLite reports it
};

}  // namespace leasefs::memory

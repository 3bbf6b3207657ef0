// The project memory as the control plane sees it. An interface so that tests can
// record the order of calls (I1: search before start) and make a save fail (I2).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memory/record.hpp"

namespace leasefs::memory {

class MemoryStore {
 public:
  virtual ~MemoryStore() = default;

  // Full-text search over title, content and keywords, best first. Finds English
  // words and CJK text alike. An empty or punctuation-only query returns nothing.
  virtual std::vector<SearchHit> search(std::string_view query, std::size_t limit) = 0;

  // Saves a record; throws MemoryError on failure. Idempotent on a non-empty ref.
  virtual Record save(const NewRecord& record) = 0;

  virtual std::optional<Record> find_by_ref(std::string_view ref) = 0;

  // Newest record of a type, optionally restricted to one task.
  virtual std::optional<Record> newest(std::string_view type, std::string_view task_id = {}) = 0;

  virtual std::size_t count() = 0;
};

}  // namespace leasefs::memory

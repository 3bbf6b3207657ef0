// A MemoryStore that records the order of calls and can be told to fail saves.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "memory/memory_error.hpp"
#include "memory/memory_store.hpp"

namespace leasefs::testing {

class FakeMemory : public memory::MemoryStore {
 public:
  std::vector<std::string> calls;  // "search", "save", ...
  std::vector<memory::Record> records;
  bool fail_saves = false;
  bool fail_searches = false;
  std::function<void()> on_save;  // runs inside save(), before it returns

  std::vector<memory::SearchHit> search(std::string_view query, std::size_t limit) override {
    calls.push_back("search");
    if (fail_searches) throw memory::MemoryError("search failed (test)");
    std::vector<memory::SearchHit> hits;
    for (const auto& r : records) {
      if (hits.size() >= limit) break;
      if (std::string(query).find(r.keywords.empty() ? "\x01" : r.keywords.front()) !=
          std::string::npos) {
        hits.push_back({r, -1.0});
      }
    }
    return hits;
  }
  memory::Record save(const memory::NewRecord& in) override {
    calls.push_back("save");
    if (on_save) on_save();
    if (fail_saves) throw memory::MemoryError("disk full (test)");
    if (!in.ref.empty()) {
      for (const auto& r : records) {
        if (r.ref == in.ref) return r;
      }
    }
    memory::Record r{"S_" + std::to_string(records.size() + 1),
                     in.type,
                     in.title,
                     in.content,
                     in.keywords,
                     in.task_id,
                     in.ref,
                     static_cast<int64_t>(records.size())};
    records.push_back(r);
    return r;
  }
  std::optional<memory::Record> find_by_ref(std::string_view ref) override {
    calls.push_back("find_by_ref");
    for (const auto& r : records) {
      if (r.ref == ref) return r;
    }
    return std::nullopt;
  }
  std::optional<memory::Record> newest(std::string_view type, std::string_view task_id) override {
    calls.push_back("newest");
    for (auto it = records.rbegin(); it != records.rend(); ++it) {
      if (it->type == type && (task_id.empty() || it->task_id == task_id)) return *it;
    }
    return std::nullopt;
  }
  std::size_t count() override { return records.size(); }
};

}  // namespace leasefs::testing

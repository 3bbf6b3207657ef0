// Memory's use cases: search, and a note saved by hand.
#include "base/error.hpp"
#include "memory/keywords.hpp"
#include "service/service.hpp"

namespace leasefs::service {

MemorySearchResult Service::memory_search(const std::string& query, size_t limit) {
  auto lock = lock_service();
  return {query, memory_.search(query, limit)};
}

MemorySaveResult Service::memory_save(const std::string& title, const std::string& content,
                                      const std::vector<std::string>& keywords,
                                      const gate::Actor& actor) {
  auto lock = lock_service();
  if (title.empty() || content.empty()) {
    throw Error(Errc::kInvalidArgument, "a memory needs --title and --content");
  }
  auto kw = keywords.empty() ? memory::extract_keywords(title + " " + content) : keywords;
  auto record = memory_.save({"note", title, content, kw, state_.task_id, ""});
  emit({{"type", "memory.save"}, {"record_id", record.id}, {"uid", actor.uid}});
  return {record.id, record.title};
}

}  // namespace leasefs::service

// The project memory's commands: memory.search and memory.save.
#include "control/command_args.hpp"
#include "control/render.hpp"
#include "service/service.hpp"

namespace leasefs::control {

Result handle_memory_search(CommandContext& ctx, const json& args, const gate::Actor&) {
  Args a("memory.search", args);
  std::string query = a.str("query", kMaxNameBytes);
  uint64_t limit = a.opt_count("limit").value_or(10);
  if (limit == 0 || limit > 1000) a.invalid("limit", "must be between 1 and 1000");
  a.finish();
  return render(service(ctx).memory_search(query, static_cast<size_t>(limit)));
}

Result handle_memory_save(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  Args a("memory.save", args);
  std::string title = a.str("title");
  std::string content = a.str("content", kMaxNoteBytes);
  auto keywords = a.str_list("keywords");
  a.finish();
  return render(service(ctx).memory_save(title, content, keywords, actor));
}

}  // namespace leasefs::control

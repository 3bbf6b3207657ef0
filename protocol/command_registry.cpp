#include "protocol/command_registry.hpp"

namespace leasefs::protocol {

const std::vector<CommandSpec>& command_registry() {
  static const std::vector<CommandSpec> registry{
#define LEASEFS_COMMAND(id, name, mutating, streams, summary) {name, mutating, streams, summary},
#include "protocol/command_list.def"
#undef LEASEFS_COMMAND
  };
  return registry;
}

const CommandSpec* find_command_spec(std::string_view name) noexcept {
  for (const auto& spec : command_registry()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::vector<std::string> cli_words(std::string_view name) {
  std::vector<std::string> words;
  while (true) {
    size_t dot = name.find('.');
    words.emplace_back(name.substr(0, dot));
    if (dot == std::string_view::npos) break;
    name.remove_prefix(dot + 1);
  }
  return words;
}

}  // namespace leasefs::protocol

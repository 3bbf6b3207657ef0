// How leasectl shows a daemon's answer to a person. --json bypasses all of it.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace leasefs::leasectl {

struct Style {
  bool color = false;
  std::string bold(std::string_view s) const { return wrap("\033[1m", s); }
  std::string green(std::string_view s) const { return wrap("\033[32m", s); }
  std::string yellow(std::string_view s) const { return wrap("\033[33m", s); }
  std::string red(std::string_view s) const { return wrap("\033[31m", s); }
  std::string dim(std::string_view s) const { return wrap("\033[2m", s); }

 private:
  std::string wrap(const char* code, std::string_view s) const {
    if (!color) return std::string(s);
    return std::string(code) + std::string(s) + "\033[0m";
  }
};

// `text` split on its real newlines (one at the end ends the last line), each
// line through `render` (base::inert, base::inert_line), joined by newlines.
std::string render_lines(std::string_view text, std::string (*render)(std::string_view));

// Prints the result of `cmd` (the "result" member of an ok reply; for a command
// that streams, one event) to `out`, by the command's printer: one print_<id> per
// line of protocol/command_list.def, plus the views `requests` and `grants`.
void print_result(std::FILE* out, std::string_view cmd, const nlohmann::json& result,
                  const Style& style);

// One line for one event of `watch`.
std::string format_event(const nlohmann::json& event, const Style& style);

}  // namespace leasefs::leasectl

#include "service/checkpoint_text.hpp"

#include <sstream>

namespace leasefs::service {

namespace {

constexpr std::string_view kMarkerOpen = "<!-- longrun-state: ";
constexpr std::string_view kMarkerClose = " -->";
constexpr std::string_view kClosing = "Writes are closed: this checkpoint revoked the lease.";

std::string or_none(const std::string& text) {
  return text.empty() ? "(none recorded)" : text;
}

// dump() escapes control characters, so the marker stays on one line. Inside it,
// '<', '>' and '&' are written as \u003c, \u003e, \u0026: neither "<!--" (the
// marker's own opening) nor "-->" can occur in the payload, whatever the text.
std::string escape_marker(const std::string& json) {
  std::string safe;
  for (char c : json) {
    if (c == '<') {
      safe += "\\u003c";
    } else if (c == '>') {
      safe += "\\u003e";
    } else if (c == '&') {
      safe += "\\u0026";
    } else {
      safe += c;
    }
  }
  return safe;
}

}  // namespace

std::string render_checkpoint(const gate::TaskState& s, const CheckpointNotes& notes) {
  std::ostringstream out;
  out << "# Checkpoint " << s.last_checkpoint_id << " of task " << s.task_id << " ("
      << to_string(s.status) << ", turn " << s.turn_index << ")\n\n";
  out << "Goal: " << s.description << "\n";
  out << "Done when: " << or_none(s.done_when) << "\n\n";
  out << "## Summary\n" << or_none(notes.summary) << "\n\n";
  out << "## Plan position\n";
  out << "Current step: " << or_none(s.current_step) << "\n";
  out << "Next step: " << or_none(s.next_step) << "\n\n";
  out << "## Verified\n" << or_none(notes.verified) << "\n\n";
  out << "## Discarded\n" << or_none(notes.discarded) << "\n\n";
  out << "## Needs approval before the next action\n" << or_none(notes.needs_approval) << "\n\n";
  out << kClosing << " Resume with `leasectl resume " << s.task_id
      << "`; writing again needs a new grant.\n";
  const nlohmann::json marker = {{"task_id", s.task_id},
                                 {"status", to_string(s.status)},
                                 {"access_mode", "read_only"},
                                 {"turn", s.turn_index},
                                 {"checkpoint_id", s.last_checkpoint_id},
                                 {"next_step", s.next_step},
                                 {"current_step", s.current_step},
                                 {"description", s.description},
                                 {"done_when", s.done_when}};
  out << kMarkerOpen << escape_marker(marker.dump()) << kMarkerClose << "\n";
  return out.str();
}

std::string render_task_end(const gate::TaskState& s, const std::string& reason) {
  std::ostringstream out;
  out << "# Task " << s.task_id << " " << to_string(s.status) << "\n\n";
  out << "Goal: " << s.description << "\n";
  out << "Reason: " << or_none(reason) << "\n";
  const nlohmann::json marker = {{"task_id", s.task_id},
                                 {"status", to_string(s.status)},
                                 {"access_mode", "read_only"},
                                 {"turn", s.turn_index},
                                 {"checkpoint_id", s.last_checkpoint_id}};
  out << kMarkerOpen << escape_marker(marker.dump()) << kMarkerClose << "\n";
  return out.str();
}

std::string task_end_ref(const std::string& task_id) {
  return "end:" + task_id;
}

CheckpointParts checkpoint_parts(std::string_view text) {
  // The marker is the last line and the closing advice the one before it; free
  // text that quotes the advice comes earlier and is left alone.
  std::string_view body = text;
  while (!body.empty() && body.back() == '\n') body.remove_suffix(1);
  const size_t marker_at = body.rfind('\n');
  if (marker_at == std::string_view::npos || marker_at == 0) return {std::string(text), "", ""};
  const size_t closing_at = body.rfind('\n', marker_at - 1);
  const size_t start = closing_at == std::string_view::npos ? 0 : closing_at + 1;
  if (!body.substr(start, marker_at - start).starts_with(kClosing)) {
    return {std::string(text), "", ""};
  }
  return {std::string(text.substr(0, start)),
          std::string(text.substr(start, marker_at + 1 - start)),
          std::string(text.substr(marker_at + 1))};
}

// Only the last line is read: the daemon writes the marker there, after every
// line of free text, so a marker quoted in a summary, a step or a description
// (earlier lines, or inside the marker's own JSON) is never taken for it.
std::optional<nlohmann::json> parse_checkpoint_marker(std::string_view text) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  const size_t newline = text.rfind('\n');
  const std::string_view line = newline == std::string_view::npos ? text : text.substr(newline + 1);
  if (!line.starts_with(kMarkerOpen) || !line.ends_with(kMarkerClose) ||
      line.size() < kMarkerOpen.size() + kMarkerClose.size()) {
    return std::nullopt;
  }
  auto parsed = nlohmann::json::parse(
      line.substr(kMarkerOpen.size(), line.size() - kMarkerOpen.size() - kMarkerClose.size()),
      nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  return parsed;
}

}  // namespace leasefs::service

// An entry as one line of a turn's index (index.jsonl), and back.
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "journal/journal.hpp"
#include "journal/xattrs.hpp"

namespace leasefs::journal {

namespace {

using nlohmann::json;

// `key`: a key as JSON text, quotes and all.
void append_field(std::string& out, std::string_view key, std::string_view text) {
  if (out.size() > 1) out += ',';
  out += key;
  out += ':';
  out += text;
}

}  // namespace

std::string Entry::line() const {
  // Written field by field, in the order a JSON object keeps its keys (sorted),
  // so that the line is what dumping the same object would give, without
  // building one per entry (tests/journal has the equality).
  std::string out = "{";
  out.reserve(256 + path.size() + target.size());
  auto number = [&](std::string_view key, auto v) { append_field(out, key, std::to_string(v)); };
  // Only the daemon's own words (blob names, origin, why): JSON that cannot
  // hold them exactly shows them with U+FFFD, as events do.
  auto text = [&](std::string_view key, std::string_view v) {
    append_field(out, key, base::json_text(v));
  };
  // A name or a link's target is bytes: when they are not UTF-8 the line gives
  // them as text for people and exactly in hex ("path_hex", "target_hex"),
  // keys that sort right after their text's.
  auto bytes = [&](std::string_view key, std::string_view hex_key, std::string_view v) {
    std::string exact;
    try {
      exact = json(v).dump();  // strict: throws when `v` is not UTF-8
    } catch (const json::type_error&) {
      append_field(out, key, base::json_text(v));
      append_field(out, hex_key, base::json_text(hex(v)));
      return;
    }
    append_field(out, key, exact);
  };
  if (appended) append_field(out, R"("appended")", "true");
  number(R"("atime_ns")", atime_ns);
  if (!blob.empty()) text(R"("blob")", blob);
  number(R"("gid")", gid);
  number(R"("ino")", ino);
  text(R"("kind")", kind_name(kind));
  number(R"("mode")", mode);
  number(R"("mtime_ns")", mtime_ns);
  number(R"("nlink")", nlink);
  if (!origin.empty()) text(R"("origin")", origin);
  bytes(R"("path")", R"("path_hex")", path);
  number(R"("seq")", seq);
  number(R"("size")", size);
  if (!target.empty() || kind == EntryKind::kSymlink) {
    bytes(R"("target")", R"("target_hex")", target);
  }
  number(R"("turn")", turn);
  number(R"("uid")", uid);
  append_field(out, R"("undoable")", undoable ? "true" : "false");
  if (!why.empty()) text(R"("why")", why);
  if (!xattrs.empty()) append_field(out, R"("xattrs")", json(xattrs).dump());
  out += '}';
  return out;
}

Entry Entry::from_json(const json& j) {
  Entry e;
  e.seq = j.value("seq", uint64_t{0});
  e.turn = j.value("turn", uint64_t{0});
  e.path = j.contains("path_hex") ? unhex(j.value("path_hex", std::string()))
                                  : j.value("path", std::string());
  e.kind = kind_from_name(j.value("kind", std::string("other")));
  e.mode = j.value("mode", uint32_t{0});
  e.uid = j.value("uid", uint32_t{0});
  e.gid = j.value("gid", uint32_t{0});
  e.atime_ns = j.value("atime_ns", int64_t{0});
  e.mtime_ns = j.value("mtime_ns", int64_t{0});
  e.size = j.value("size", uint64_t{0});
  e.ino = j.value("ino", uint64_t{0});
  e.nlink = j.value("nlink", uint64_t{0});
  e.target = j.contains("target_hex") ? unhex(j.value("target_hex", std::string()))
                                      : j.value("target", std::string());
  if (j.contains("xattrs")) e.xattrs = j["xattrs"].get<std::map<std::string, std::string>>();
  e.blob = j.value("blob", std::string());
  e.undoable = j.value("undoable", true);
  e.why = j.value("why", std::string());
  e.origin = j.value("origin", std::string());
  e.appended = j.value("appended", false);
  return e;
}

}  // namespace leasefs::journal

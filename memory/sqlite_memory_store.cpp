#include "memory/sqlite_memory_store.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "base/clock.hpp"
#include "base/json_text.hpp"
#include "memory/memory_error.hpp"
#include "memory/record_id.hpp"
#include "memory/schema.hpp"
#include "memory/text_tokens.hpp"

namespace leasefs::memory {
namespace {

constexpr std::string_view kColumns =
    "id, type, title, content, keywords_json, task_id, ref, created_ms";

// bm25 column weights: title, content, keywords.
constexpr std::string_view kBm25Weights = "10.0, 1.0, 5.0";

// Score added for each short CJK term matched by LIKE. bm25 scores of typical
// matches lie between about -1 and -10; a LIKE match counts as a modest one.
constexpr double kLikeScore = -1.0;

// Quotes a term as an FTS5 string literal: wrapped in double quotes, inner
// double quotes doubled. This is FTS5 query syntax; the whole query is still
// bound as an SQL parameter.
std::string fts_quote(std::string_view term) {
  std::string out = "\"";
  for (char ch : term) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
  return out;
}

// Builds a LIKE pattern matching term anywhere; used with ESCAPE '\'.
std::string like_pattern(std::string_view term) {
  std::string out = "%";
  for (char ch : term) {
    if (ch == '%' || ch == '_' || ch == '\\') out += '\\';
    out += ch;
  }
  out += '%';
  return out;
}

Record read_record(const Statement& stmt) {
  Record record;
  record.id = stmt.column_text(0);
  record.type = stmt.column_text(1);
  record.title = stmt.column_text(2);
  record.content = stmt.column_text(3);
  record.keywords = stmt.column_string_list(4);
  record.task_id = stmt.column_text(5);
  record.ref = stmt.column_is_null(6) ? std::string{} : stmt.column_text(6);
  record.created_ms = stmt.column_int64(7);
  return record;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

constexpr std::size_t kMaxQueryBytes = 4096;
constexpr std::size_t kMaxTerms = 32;

// The longest prefix of at most `max` bytes that does not split a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view text, std::size_t max) {
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

}  // namespace

SqliteMemoryStore::SqliteMemoryStore(const std::string& db_path, SqliteDb::Options options)
    : db_(open_database(db_path, options)) {
  auto stmt = db_.prepare("SELECT COUNT(*) FROM records");
  count_ = stmt.step() ? static_cast<std::size_t>(stmt.column_int64(0)) : 0;
}

std::vector<SearchHit> SqliteMemoryStore::search(std::string_view query, std::size_t limit) {
  if (limit == 0) return {};

  // A search runs under the control plane's lock, so its cost is bounded: the first
  // kMaxQueryBytes of the query and at most kMaxTerms distinct terms count.
  if (query.size() > kMaxQueryBytes) query = utf8_prefix(query, kMaxQueryBytes);
  std::vector<TextToken> terms;
  std::unordered_set<std::string> seen;
  for (TextToken& token : tokenize_text(query)) {
    if (terms.size() == kMaxTerms) break;
    if (seen.insert(ascii_lower(token.text)).second) terms.push_back(std::move(token));
  }
  if (terms.empty()) return {};

  // The word index gets every term; CJK terms as prefixes, so that "초과" also
  // finds "초과를". The trigram index gets terms of three or more code points.
  std::vector<std::string> word_terms;
  std::vector<std::string> trigram_terms;
  std::vector<std::string> like_terms;
  for (const TextToken& term : terms) {
    word_terms.push_back(fts_quote(term.text) + (term.cjk ? "*" : ""));
    if (term.code_points >= 3) {
      trigram_terms.push_back(fts_quote(term.text));
    } else if (term.cjk) {
      like_terms.push_back(term.text);
    }
  }

  // Enough candidates from each source that merging still finds the best.
  const auto candidates = static_cast<std::int64_t>(std::max<std::size_t>(limit * 4, 50));
  std::map<std::int64_t, double> scores;  // seq -> combined score

  std::lock_guard lock(mutex_);
  const auto run_fts = [&](std::string_view table, const std::vector<std::string>& fts_terms) {
    if (fts_terms.empty()) return;
    std::string sql = "SELECT rowid, bm25(";
    sql += table;
    sql += ", ";
    sql += kBm25Weights;
    sql += ") FROM ";
    sql += table;
    sql += " WHERE ";
    sql += table;
    sql += " MATCH ? ORDER BY rank LIMIT ?";
    auto stmt = db_.prepare(sql);
    stmt.bind_all(join(fts_terms, " OR "), candidates);
    while (stmt.step()) scores[stmt.column_int64(0)] += stmt.column_double(1);
  };
  run_fts("records_fts", word_terms);
  run_fts("records_tri", trigram_terms);
  for (const std::string& term : like_terms) {
    auto stmt = db_.prepare(
        "SELECT seq FROM records WHERE title LIKE ?1 ESCAPE '\\' OR content LIKE ?1 ESCAPE '\\' "
        "OR keywords LIKE ?1 ESCAPE '\\' ORDER BY seq DESC LIMIT ?2");
    stmt.bind_all(like_pattern(term), candidates);
    while (stmt.step()) scores[stmt.column_int64(0)] += kLikeScore;
  }

  // Best score first; on a tie, the newer record.
  std::vector<std::pair<std::int64_t, double>> ranked(scores.begin(), scores.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first > b.first;
  });
  if (ranked.size() > limit) ranked.resize(limit);

  std::vector<SearchHit> hits;
  hits.reserve(ranked.size());
  auto fetch = db_.prepare("SELECT " + std::string(kColumns) + " FROM records WHERE seq = ?");
  for (const auto& [seq, score] : ranked) {
    fetch.reset();
    fetch.bind(1, seq);
    if (fetch.step()) hits.push_back(SearchHit{read_record(fetch), score});
  }
  return hits;
}

Record SqliteMemoryStore::save(const NewRecord& record) {
  std::lock_guard lock(mutex_);
  bool inserted = false;
  Record out = db_.transaction([&]() -> Record {
    if (!record.ref.empty()) {
      auto existing =
          db_.prepare("SELECT " + std::string(kColumns) + " FROM records WHERE ref = ?");
      existing.bind(1, record.ref);
      if (existing.step()) {
        // A replay of the same record is idempotent; different content under the
        // same ref would make the caller print text that memory does not hold.
        Record found = read_record(existing);
        if (found.content != record.content || found.task_id != record.task_id) {
          throw MemoryError("memory already holds " + found.id + " under \"" + record.ref +
                            "\" with different content; refusing to return it for a new one");
        }
        return found;
      }
    }
    std::int64_t seq = 1;
    {
      auto next = db_.prepare("SELECT COALESCE(MAX(seq), 0) + 1 FROM records");
      if (next.step()) seq = next.column_int64(0);
    }
    Record saved;
    saved.id = make_record_id("S", seq);
    saved.type = record.type;
    saved.title = record.title;
    saved.content = record.content;
    saved.keywords = record.keywords;
    saved.task_id = record.task_id;
    saved.ref = record.ref;
    saved.created_ms = base::now_ms();

    const nlohmann::json keywords_json = saved.keywords;
    auto insert = db_.prepare(
        "INSERT INTO records (seq, id, type, title, content, keywords_json, keywords, task_id, "
        "ref, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.bind_all(seq, saved.id, saved.type, saved.title, saved.content,
                    base::json_text(keywords_json), join(saved.keywords, " "), saved.task_id);
    if (saved.ref.empty()) {
      insert.bind_null(9);
    } else {
      insert.bind(9, saved.ref);
    }
    insert.bind(10, saved.created_ms);
    insert.run();
    inserted = true;
    return saved;
  });
  if (inserted) count_.fetch_add(1, std::memory_order_relaxed);  // committed
  return out;
}

std::optional<Record> SqliteMemoryStore::find_by_ref(std::string_view ref) {
  if (ref.empty()) return std::nullopt;
  std::lock_guard lock(mutex_);
  auto stmt = db_.prepare("SELECT " + std::string(kColumns) + " FROM records WHERE ref = ?");
  stmt.bind(1, ref);
  if (stmt.step()) return read_record(stmt);
  return std::nullopt;
}

std::optional<Record> SqliteMemoryStore::newest(std::string_view type, std::string_view task_id) {
  std::lock_guard lock(mutex_);
  std::string sql = "SELECT " + std::string(kColumns) + " FROM records WHERE type = ?";
  if (!task_id.empty()) sql += " AND task_id = ?";
  sql += " ORDER BY seq DESC LIMIT 1";
  auto stmt = db_.prepare(sql);
  stmt.bind(1, type);
  if (!task_id.empty()) stmt.bind(2, task_id);
  if (stmt.step()) return read_record(stmt);
  return std::nullopt;
}

std::size_t SqliteMemoryStore::count() {
  return count_.load(std::memory_order_relaxed);
}

}  // namespace leasefs::memory
